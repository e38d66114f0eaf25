package ownership_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// configMapsOf is what a Deployment references: the ConfigMaps its pods mount.
func configMapsOf(d *appsv1.Deployment) []string {
	var names []string
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil {
			names = append(names, v.ConfigMap.Name)
		}
	}
	return names
}

// mounting returns a Deployment named name whose pods mount the named ConfigMaps.
func mounting(namespace, name string, configMaps ...string) *appsv1.Deployment {
	tmpl := template()
	for _, cm := range configMaps {
		tmpl.Spec.Volumes = append(tmpl.Spec.Volumes, corev1.Volume{Name: cm, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}})
	}
	return ownership.Deployment(namespace, name, 1, tmpl)
}

// reconciled records the requests a controller was asked to reconcile in one namespace, by
// name.
type reconciled struct {
	namespace string
	mu        sync.Mutex
	names     map[string]int
}

func (r *reconciled) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.Namespace == r.namespace {
		r.names[req.Name]++
	}
	return reconcile.Result{}, nil
}

func (r *reconciled) reset() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.names
	r.names = map[string]int{}
	return got
}

// await waits until every name in want has been reconciled, and returns every name that was,
// forgetting them.
func (r *reconciled) await(t *testing.T, want ...string) map[string]int {
	t.Helper()
	reconciletest.Eventually(t, func(context.Context) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, name := range want {
			if r.names[name] == 0 {
				return fmt.Errorf("%s not reconciled yet; reconciled: %v", name, r.names)
			}
		}
		return nil
	})
	return r.reset()
}

func TestEnqueueReferencingReconcilesExactlyTheReferrers(t *testing.T) {
	c, _, owner := setup(t)
	ns := owner.Namespace
	for _, d := range []*appsv1.Deployment{
		mounting(ns, "web", "settings"), mounting(ns, "worker", "settings", "queue"), mounting(ns, "cron", "queue"),
		mounting(ns, "lonely"), mounting(ns, "waiting", "not-yet"),
	} {
		if err := c.Create(t.Context(), d); err != nil {
			t.Fatal(err)
		}
	}
	settings, queue, unrelated := named(owner, "settings"), named(owner, "queue"), named(owner, "unrelated")
	for _, cm := range []*corev1.ConfigMap{settings, queue, unrelated} {
		if err := c.Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
	}

	r := &reconciled{namespace: ns, names: map[string]int{}}
	reconciletest.StartManager(t, cp.Config, manager.Options{}, func(mgr manager.Manager) error {
		if err := ownership.IndexReferences(context.Background(), mgr.GetFieldIndexer(), "spec.configMaps", configMapsOf); err != nil {
			return err
		}
		return builder.ControllerManagedBy(mgr).Named("referrers").For(&appsv1.Deployment{}).
			Watches(&corev1.ConfigMap{}, ownership.EnqueueReferencing(mgr.GetClient(), &appsv1.DeploymentList{}, "spec.configMaps")).
			Complete(r)
	})
	// Every Deployment is reconciled once as the manager starts.
	r.await(t, "web", "worker", "cron", "lonely", "waiting")

	edit := func(cm *corev1.ConfigMap) {
		t.Helper()
		cm.Data = map[string]string{"edited": cm.ResourceVersion}
		if err := c.Update(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		do   func()
		want []string
	}{
		{"an edit reconciles the referrers of the edited object", func() { edit(settings) }, []string{"web", "worker"}},
		{"an object referenced twice reconciles each referrer", func() { edit(queue) }, []string{"cron", "worker"}},
		{"a missing object that appears reconciles the referrers waiting for it", func() {
			if err := c.Create(t.Context(), named(owner, "not-yet")); err != nil {
				t.Fatal(err)
			}
		}, []string{"waiting"}},
		{"a deleted object reconciles its referrers", func() {
			if err := c.Delete(t.Context(), queue); err != nil {
				t.Fatal(err)
			}
		}, []string{"cron", "worker"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.do()
			got := slices.Sorted(maps.Keys(r.await(t, tt.want...)))
			if !slices.Equal(got, tt.want) {
				t.Errorf("reconciled %v, want exactly %v", got, tt.want)
			}
		})
	}

	t.Run("an edit of an unreferenced object reconciles nothing", func(t *testing.T) {
		edit(unrelated)
		// Events of one informer are handled in order: once the referrers of a later edit
		// are reconciled, whatever the unrelated edit asked for has been asked for too.
		edit(settings)
		got := slices.Sorted(maps.Keys(r.await(t, "web", "worker")))
		if want := []string{"web", "worker"}; !slices.Equal(got, want) {
			t.Errorf("reconciled %v, want only the later edit's %v", got, want)
		}
	})
}

func TestConfigHashRollsTheDeploymentOnlyWhenTheDataChanges(t *testing.T) {
	c, counter, owner := setup(t)
	cm := named(owner, "settings")
	cm.Data = map[string]string{"memory": "64"}
	if err := c.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	desiredWith := func(cm *corev1.ConfigMap) *appsv1.Deployment {
		t.Helper()
		d := mounting(owner.Namespace, "web", "settings")
		if err := ownership.SetConfigHash(&d.Spec.Template, cm); err != nil {
			t.Fatal(err)
		}
		return d
	}
	live, _ := ensure(t, c, owner, desiredWith(cm))
	generation := live.Generation

	tests := []struct {
		name   string
		change func(cm *corev1.ConfigMap)
		rolls  bool
	}{
		{"unchanged data does not roll", func(*corev1.ConfigMap) {}, false},
		{"a new label does not roll", func(cm *corev1.ConfigMap) { cm.Labels = map[string]string{"team": "cache"} }, false},
		{"changed data rolls once", func(cm *corev1.ConfigMap) { cm.Data["memory"] = "128" }, true},
		{"the same data again does not roll again", func(*corev1.ConfigMap) {}, false},
		{"binary data rolls", func(cm *corev1.ConfigMap) { cm.BinaryData = map[string][]byte{"key": {1, 2}} }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.change(cm)
			if err := c.Update(t.Context(), cm); err != nil {
				t.Fatal(err)
			}
			counter.Reset()
			got, result := ensure(t, c, owner, desiredWith(cm))
			if rolled := got.Generation > generation; rolled != tt.rolls || (result.Action == ownership.Updated) != tt.rolls {
				t.Errorf("Ensure = %s, generation %d → %d; want a roll: %v", result.Action, generation, got.Generation, tt.rolls)
			}
			if !tt.rolls && counter.Writes() != 0 {
				t.Errorf("Ensure wrote without a change of data:\n%s", counter)
			}
			generation = got.Generation
		})
	}
}

func TestConfigHash(t *testing.T) {
	cm := func(data map[string]string, mutate ...func(*corev1.ConfigMap)) *corev1.ConfigMap {
		c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "settings", ResourceVersion: "1"}, Data: data}
		for _, m := range mutate {
			m(c)
		}
		return c
	}
	unstructuredOf := func(obj client.Object) client.Object {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		out := &unstructured.Unstructured{Object: u}
		out.SetAPIVersion("v1")
		out.SetKind("ConfigMap")
		return out
	}
	base := cm(map[string]string{"a": "1", "b": "2"})
	tests := []struct {
		name string
		objs []client.Object
		same bool
	}{
		{"metadata does not count", []client.Object{cm(map[string]string{"a": "1", "b": "2"}, func(c *corev1.ConfigMap) {
			c.ResourceVersion, c.Labels, c.Annotations = "9", map[string]string{"x": "y"}, map[string]string{"x": "y"}
		})}, true},
		{"the unstructured form hashes as the typed one", []client.Object{unstructuredOf(base)}, true},
		{"a changed value counts", []client.Object{cm(map[string]string{"a": "1", "b": "3"})}, false},
		{"another object with the same data counts", []client.Object{cm(map[string]string{"a": "1", "b": "2"}, func(c *corev1.ConfigMap) { c.Name = "other" })}, false},
		{"an absent optional object counts", []client.Object{base, nil}, false},
		{"a secret is hashed by its data", []client.Object{&corev1.Secret{ObjectMeta: base.ObjectMeta, Data: map[string][]byte{"a": []byte("1"), "b": []byte("2")}}}, false},
	}
	want, err := ownership.ConfigHash(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ownership.ConfigHash(tt.objs...)
			if err != nil {
				t.Fatal(err)
			}
			if (got == want) != tt.same {
				t.Errorf("ConfigHash = %s, base %s; want the same: %v", got, want, tt.same)
			}
			if strings.ContainsAny(got, "/ ") || len(got) > 63 {
				t.Errorf("ConfigHash = %q, not usable as an annotation value everywhere", got)
			}
		})
	}
}
