package readiness_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/internal/clustertest"
	"github.com/reconcilekit/reconcilekit/readiness"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/workload"
)

// TestPodsListsTheDeploymentsPods lists the pods of Deployment "web" (selector app=web)
// among pods of its ReplicaSet, of another Deployment's ReplicaSet that the selector also
// matches, and without an owner: from a cache with IndexPods' index, its own pods only;
// from a cache without it, or from the API server, every pod its selector matches.
func TestPodsListsTheDeploymentsPods(t *testing.T) {
	direct, _, owner := clustertest.Setup(t, cp(t))
	ns := owner.Namespace
	web := clustertest.Deployment(owner)
	replicaSet := func(name string) *metav1.OwnerReference {
		return metav1.NewControllerRef(&metav1.ObjectMeta{Name: name, UID: types.UID(name)}, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
	}
	for _, p := range []struct {
		name, hash string
		owner      *metav1.OwnerReference
	}{
		{"web-5d8f-a", "5d8f", replicaSet("web-5d8f")},
		{"web-6c4b-a", "6c4b", replicaSet("web-6c4b")}, // a second revision, in a rollout
		{"web-canary-77aa-a", "77aa", replicaSet("web-canary-77aa")},
		{"web-adopted-later", "", nil},
		{"web-5d8f-unhashed", "", replicaSet("web-5d8f")},
	} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.name, Labels: map[string]string{"app": "web"}},
			Spec: clustertest.PodTemplate().Spec}
		if p.hash != "" {
			pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = p.hash
		}
		if p.owner != nil {
			pod.OwnerReferences = []metav1.OwnerReference{*p.owner}
		}
		if err := direct.Create(t.Context(), pod); err != nil {
			t.Fatal(err)
		}
	}
	every := []string{"web-5d8f-a", "web-5d8f-unhashed", "web-6c4b-a", "web-adopted-later", "web-canary-77aa-a"}

	for _, tc := range []struct {
		name   string
		reader func(*testing.T) client.Reader
		want   []string
	}{
		{"a cache with the index lists the pods of the Deployment's ReplicaSets", func(t *testing.T) client.Reader { return podCache(t, ns, true) },
			[]string{"web-5d8f-a", "web-6c4b-a"}},
		{"a cache without the index lists every pod the selector matches", func(t *testing.T) client.Reader { return podCache(t, ns, false) }, every},
		{"the API server lists every pod the selector matches", func(*testing.T) client.Reader { return direct }, every},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.reader(t)
			reconciletest.Eventually(t, func(ctx context.Context) error {
				pods, err := readiness.Pods(ctx, r, web)
				if err != nil {
					return err
				}
				var got []string
				for _, p := range pods {
					got = append(got, p.Name)
				}
				slices.Sort(got)
				if !slices.Equal(got, tc.want) {
					return fmt.Errorf("pods %v, want %v", got, tc.want)
				}
				return nil
			})
		})
	}
}

// TestStatefulSetPodsListsItsOwnPods lists the pods of StatefulSet "db" (selector app=db)
// among its own, those of another StatefulSet and of a Deployment of the same name whose
// selectors it also matches, and one without an owner: from a cache with IndexPods' index,
// its own only; from the API server, every pod its selector matches.
func TestStatefulSetPodsListsItsOwnPods(t *testing.T) {
	direct, _, owner := clustertest.Setup(t, cp(t))
	ns := owner.Namespace
	db := workload.StatefulSet(ns, "db", 2, corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}}})
	controller := func(kind, name string) *metav1.OwnerReference {
		return metav1.NewControllerRef(&metav1.ObjectMeta{Name: name, UID: types.UID(kind + name)}, appsv1.SchemeGroupVersion.WithKind(kind))
	}
	for _, p := range []struct {
		name  string
		owner *metav1.OwnerReference
		hash  string
	}{
		{"db-0", controller("StatefulSet", "db"), ""},
		{"db-1", controller("StatefulSet", "db"), ""},
		{"db-canary-0", controller("StatefulSet", "db-canary"), ""},
		{"db-5d8f-a", controller("ReplicaSet", "db-5d8f"), "5d8f"}, // the Deployment db's
		{"db-adopted-later", nil, ""},
	} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.name, Labels: map[string]string{"app": "db"}}, Spec: clustertest.PodTemplate().Spec}
		if p.hash != "" {
			pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = p.hash
		}
		if p.owner != nil {
			pod.OwnerReferences = []metav1.OwnerReference{*p.owner}
		}
		if err := direct.Create(t.Context(), pod); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		reader func(*testing.T) client.Reader
		want   []string
	}{
		{"a cache with the index lists the pods the StatefulSet controls", func(t *testing.T) client.Reader { return podCache(t, ns, true) },
			[]string{"db-0", "db-1"}},
		{"the API server lists every pod the selector matches", func(*testing.T) client.Reader { return direct },
			[]string{"db-0", "db-1", "db-5d8f-a", "db-adopted-later", "db-canary-0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.reader(t)
			reconciletest.Eventually(t, func(ctx context.Context) error {
				pods, err := readiness.StatefulSetPods(ctx, r, db)
				if err != nil {
					return err
				}
				var got []string
				for _, p := range pods {
					got = append(got, p.Name)
				}
				slices.Sort(got)
				if !slices.Equal(got, tc.want) {
					return fmt.Errorf("pods %v, want %v", got, tc.want)
				}
				return nil
			})
		})
	}
}

// podCache is a started informer cache of the namespace's pods, with IndexPods' index if
// indexed.
func podCache(t *testing.T, namespace string, indexed bool) cache.Cache {
	t.Helper()
	c, err := cache.New(cp(t).Config, cache.Options{Scheme: scheme.Scheme, DefaultNamespaces: map[string]cache.Config{namespace: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if indexed {
		if err := readiness.IndexPods(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = c.Start(ctx) }()
	return c
}
