package reliability

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	at "github.com/reconcilekit/reconcilekit/examples/at/controller"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/workload"
)

// foreigner is an object that has the name an operator would give what it creates, but
// belongs to someone else, or to no one.
type foreigner struct {
	op  *operator
	obj client.Object
	// condition and reason are what the operator's object must say about it.
	condition, reason string
}

func TestForeignObjectsAreLeftAloneAndReported(t *testing.T) {
	s := sized()
	admin := cp.Client(t, scheme)
	ns := cp.RestrictedNamespace(t)
	someone := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "someone-else"}}
	if err := admin.Create(t.Context(), someone); err != nil {
		t.Fatal(err)
	}
	owners := []struct {
		suffix string
		refs   []metav1.OwnerReference
	}{
		{"orphan", nil},
		{"owned", []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: someone.Name, UID: someone.UID, Controller: ptr.To(true)}}},
	}

	var foreigners []foreigner
	for _, o := range owners {
		foreigners = append(foreigners,
			foreigner{memcachedOperator, foreignDeployment(ns, "memcached-"+o.suffix, o.refs), conditions.Stalled, "DeploymentNotOwned"},
			foreigner{podsetOperator, foreignDeployment(ns, "podset-"+o.suffix, o.refs), conditions.Stalled, "DeploymentNotOwned"},
			// The At operator caches only the pods it labels as its own: a foreign pod
			// may carry those labels or not.
			foreigner{atOperator, foreignPod(ns, "at-labelled-"+o.suffix, o.refs, atPodLabels), at.Succeeded, "PodNameTaken"},
			foreigner{atOperator, foreignPod(ns, "at-unlabelled-"+o.suffix, o.refs, nil), at.Succeeded, "PodNameTaken"},
		)
	}
	for _, f := range foreigners {
		if err := admin.Create(t.Context(), f.obj); err != nil {
			t.Fatal(err)
		}
	}

	requests := map[*operator]*reconciletest.Counter{}
	for _, op := range operators {
		requests[op] = &reconciletest.Counter{}
		op.start(t, requests[op].Wrap(op.config(t)), ns)
	}
	for _, f := range foreigners {
		if err := admin.Create(t.Context(), f.op.object(ns, f.obj.GetName(), 1)); err != nil {
			t.Fatal(err)
		}
	}

	for _, f := range foreigners {
		t.Run(f.obj.GetName(), func(t *testing.T) {
			key := client.ObjectKeyFromObject(f.obj)
			await(t, s.limit, func(ctx context.Context) error {
				obj := f.op.empty()
				if err := admin.Get(ctx, key, obj); err != nil {
					return err
				}
				c := conditions.Find(obj.(conditions.Getter), f.condition)
				if c == nil || c.Reason != f.reason || !strings.Contains(c.Message, f.obj.GetName()) {
					return fmt.Errorf("the %s says %v; want %s with reason %s, naming the %s", f.op.name, c, f.condition, f.reason, f.op.child)
				}
				return nil
			})
			now := f.obj.DeepCopyObject().(client.Object)
			if err := admin.Get(t.Context(), key, now); err != nil {
				t.Fatalf("the foreign %s is gone: %v", f.op.child, err)
			}
			if why := tampered(f.obj, now); why != "" {
				t.Errorf("the foreign %s was changed: %s", f.op.child, why)
			}
		})
	}
	// A create is allowed: where the operator caches its own children only (the At's pods,
	// by label), a foreign child is a cache miss, and Ensure's create of it fails with
	// AlreadyExists without changing anything, as tampered checks above.
	for _, op := range operators {
		for _, verb := range []string{"update", "patch", "delete"} {
			if n := requests[op].Count(verb, op.child); n > 0 {
				t.Errorf("the %s operator sent %d %s requests for %s", op.name, n, verb, op.child)
			}
		}
	}
}

var atPodLabels = map[string]string{"app.kubernetes.io/managed-by": "at-operator"}

func foreignDeployment(ns, name string, owners []metav1.OwnerReference) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	d := workload.Deployment(ns, name, 1, corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       workload.Restricted(corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}, 1000),
	})
	d.OwnerReferences = owners
	return d
}

func foreignPod(ns, name string, owners []metav1.OwnerReference, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, OwnerReferences: owners},
		Spec:       workload.Restricted(corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}, 1000),
	}
}

// tampered says how now differs from what was created, in what its creator set: the
// spec, the labels and the owners; and whether an operator applied to it. The status
// and some annotations are the cluster's to change.
func tampered(created, now client.Object) string {
	switch {
	case !now.GetDeletionTimestamp().IsZero():
		return "it is being deleted"
	case now.GetUID() != created.GetUID():
		return "it was replaced"
	case !equality.Semantic.DeepEqual(now.GetOwnerReferences(), created.GetOwnerReferences()):
		return fmt.Sprintf("owners %v, not %v", now.GetOwnerReferences(), created.GetOwnerReferences())
	case !equality.Semantic.DeepEqual(now.GetLabels(), created.GetLabels()):
		return fmt.Sprintf("labels %v, not %v", now.GetLabels(), created.GetLabels())
	case now.GetAnnotations()[ownership.IntentAnnotation] != "":
		return "it carries an operator's intent annotation"
	case now.GetGeneration() != created.GetGeneration():
		return fmt.Sprintf("its spec changed: generation %d, not %d", now.GetGeneration(), created.GetGeneration())
	}
	return ""
}
