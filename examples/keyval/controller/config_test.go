package controller_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storev1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/examples/keyval/controller"
	"github.com/reconcilekit/reconcilekit/ownership"
)

func TestConfigFileHasTheOperatorsDirectivesThenTheSpecsInOrder(t *testing.T) {
	for _, tt := range []struct {
		name   string
		config map[string]string
		want   string // the directives after the operator's
	}{
		{"no config: the operator's alone", nil, ""},
		{"directives in the order of their names", map[string]string{"maxmemory-policy": "allkeys-lru", "maxmemory": "64mb", "appendfsync": "everysec"},
			"appendfsync everysec\nmaxmemory 64mb\nmaxmemory-policy allkeys-lru\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kv := &storev1alpha1.Keyval{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "sessions"}, Spec: storev1alpha1.KeyvalSpec{Replicas: 3, Config: tt.config}}
			file := controller.ConfigMap(kv).Data[controller.ConfigFile]
			operators := "port 6379\ndir /data\nappendonly yes\n"
			if _, after, ok := strings.Cut(file, operators); !ok || after != tt.want {
				t.Errorf("the configuration file is\n%s\nwant the operator's directives, then\n%s", file, tt.want)
			}
		})
	}
}

func TestConfigHashChangesWithTheConfigAlone(t *testing.T) {
	hash := func(replicas int32, config map[string]string) string {
		kv := &storev1alpha1.Keyval{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "sessions"}, Spec: storev1alpha1.KeyvalSpec{Replicas: replicas, Config: config}}
		sts, err := controller.StatefulSet(kv, controller.ConfigMap(kv))
		if err != nil {
			t.Fatal(err)
		}
		return sts.Spec.Template.Annotations[ownership.ConfigHashAnnotation]
	}
	base := hash(3, map[string]string{"maxmemory": "64mb"})
	for _, tt := range []struct {
		name     string
		replicas int32
		config   map[string]string
		changed  bool
	}{
		{"the same config", 3, map[string]string{"maxmemory": "64mb"}, false},
		{"another size", 5, map[string]string{"maxmemory": "64mb"}, false},
		{"another value", 3, map[string]string{"maxmemory": "128mb"}, true},
		{"one more directive", 3, map[string]string{"maxmemory": "64mb", "appendfsync": "always"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := hash(tt.replicas, tt.config); (got != base) != tt.changed || got == "" {
				t.Errorf("hash %q, before %q; want changed: %t", got, base, tt.changed)
			}
		})
	}
}
