package ownership_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/internal/clustertest"
	"github.com/reconcilekit/reconcilekit/ownership"
)

func TestEnsureGivesAChildTheLabelsOfItsContextWithoutChangingItsIntent(t *testing.T) {
	c, counter, owner := clustertest.Setup(t, cp(t))
	plain, _ := ensure(t, c, owner, clustertest.Deployment(owner))
	intent := plain.Annotations[ownership.IntentAnnotation]
	if err := c.Delete(t.Context(), plain); err != nil {
		t.Fatal(err)
	}

	// Created with the label, in the one create.
	counter.Reset()
	w := ownership.NewTestWriter(c)
	w.Labels = map[string]string{"shard": "a"}
	created, result, err := ownership.Ensure(t.Context(), w, owner, clustertest.Deployment(owner))
	if err != nil {
		t.Fatal(err)
	}
	if result.Action != ownership.Created || created.Labels["shard"] != "a" || counter.Writes() != 1 {
		t.Errorf("Ensure %s with labels %v in %d writes; want Created with shard a in 1", result.Action, created.Labels, counter.Writes())
	}
	if got := created.Annotations[ownership.IntentAnnotation]; got != intent {
		t.Errorf("the intent with a child label is %s, without %s: a move of the owner would reapply every child", got, intent)
	}

	// Relabelled with a patch when the label it has is another, as after its owner moved
	// while the child was out of sight.
	live := &appsv1.Deployment{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(created), live); err != nil {
		t.Fatal(err)
	}
	w.Labels = map[string]string{"shard": "b"}
	updated, result, err := ownership.Ensure(t.Context(), w, owner, clustertest.Deployment(owner))
	if err != nil {
		t.Fatal(err)
	}
	if result.Action != ownership.Updated || updated.Labels["shard"] != "b" {
		t.Errorf("Ensure %s with labels %v; want Updated with shard b", result.Action, updated.Labels)
	}
}
