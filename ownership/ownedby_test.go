package ownership_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/internal/clustertest"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// owned is the Writer's label of these tests, as the reconcile shell gives it.
var owned = map[string]string{ownership.OwnedByLabel: "configmap"}

// A create-only child made before the Writer had its labels (an older operator's), or
// stripped of them, gets them, and them alone, with one write; then none. Before
// CreateOnly knew of the labels, it left such a child out of a cache restricted by them
// for good.
func TestEnsureCreateOnlyGivesAnExistingChildTheWritersLabels(t *testing.T) {
	c, counter, owner := clustertest.Setup(t, cp(t))
	plain := ownership.NewTestWriter(c) // before the label
	ensure(t, c, owner, clustertest.Deployment(owner), ownership.CreateOnly())
	labelling := plain
	labelling.Labels = owned
	changed := clustertest.Deployment(owner)
	changed.Spec.Replicas = ptr.To[int32](3)
	counter.Reset()
	got, result, err := ownership.Ensure(t.Context(), labelling, owner, changed, ownership.CreateOnly())
	if err != nil {
		t.Fatal(err)
	}
	if result.Action != ownership.Updated || counter.Writes() != 1 || !strings.Contains(result.Diff, ownership.OwnedByLabel) {
		t.Errorf("Ensure = %s (%q) after %d writes, want Updated naming the label, in one write", result.Action, result.Diff, counter.Writes())
	}
	if got.Labels[ownership.OwnedByLabel] != "configmap" || got.Labels["app"] != "web" || *got.Spec.Replicas != 2 {
		t.Errorf("the child has labels %v and %d replicas, want the label added, its own kept and its spec as created", got.Labels, *got.Spec.Replicas)
	}
	reconciletest.ExpectNoWrites(t, counter, func() {
		if _, result, err := ownership.Ensure(t.Context(), labelling, owner, changed, ownership.CreateOnly()); err != nil || result.Action != ownership.Unchanged {
			t.Errorf("Ensure = %s, %v once labelled, want Unchanged", result.Action, err)
		}
	})
}

// An object of the child's name that the owner does not control is never given the
// Writer's labels, by Ensure or CreateOnly: it stays someone else's, NotControlledError.
func TestEnsureGivesNoLabelToAnObjectItDoesNotControl(t *testing.T) {
	c, counter, owner := clustertest.Setup(t, cp(t))
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: "theirs", Labels: map[string]string{"mine": "no"}}}
	if err := c.Create(t.Context(), foreign); err != nil {
		t.Fatal(err)
	}
	w := ownership.NewTestWriter(c)
	w.Labels = owned
	for _, opts := range [][]ownership.Option{nil, {ownership.CreateOnly()}} {
		counter.Reset()
		desired := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: "theirs"}, Data: map[string]string{"a": "b"}}
		_, _, err := ownership.Ensure(t.Context(), w, owner, desired, opts...)
		if !ownership.IsNotControlled(err) || counter.Writes() != 0 {
			t.Errorf("Ensure (%d options) = %v after %d writes, want a NotControlledError and none", len(opts), err, counter.Writes())
		}
	}
	live := &corev1.ConfigMap{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(foreign), live); err != nil {
		t.Fatal(err)
	}
	if _, ok := live.Labels[ownership.OwnedByLabel]; ok || len(live.Data) != 0 {
		t.Errorf("the object someone else has was changed: labels %v, data %v", live.Labels, live.Data)
	}
}
