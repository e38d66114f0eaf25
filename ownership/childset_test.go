package ownership_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/internal/clustertest"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

var shardLabels = map[string]string{"example.com/shard-of": "owner"}

// shards returns n desired shards of owner, shard-0 to shard-(n-1), without the set's label:
// EnsureSet adds it.
func shards(owner client.Object, n int) []*corev1.ConfigMap {
	out := make([]*corev1.ConfigMap, n)
	for i := range out {
		out[i] = &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: owner.GetNamespace(), Name: fmt.Sprintf("shard-%d", i)},
			Data:       map[string]string{"shard": fmt.Sprint(i)},
		}
	}
	return out
}

func ensureSet(t *testing.T, c client.Client, owner client.Object, desired []*corev1.ConfigMap) ownership.SetResult[*corev1.ConfigMap] {
	t.Helper()
	result, err := ownership.EnsureSet(t.Context(), ownership.NewTestWriter(c), owner, &corev1.ConfigMapList{}, shardLabels, desired)
	if err != nil {
		t.Fatalf("EnsureSet: %v", err)
	}
	return result
}

// awaitMembers waits until the cache holds exactly n members of the set.
func awaitMembers(t *testing.T, c client.Client, namespace string, n int) {
	t.Helper()
	reconciletest.Eventually(t, func(ctx context.Context) error {
		var list corev1.ConfigMapList
		if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels(shardLabels)); err != nil {
			return err
		}
		if len(list.Items) != n {
			return fmt.Errorf("the cache holds %d members, want %d", len(list.Items), n)
		}
		return nil
	})
}

func TestEnsureSetConvergesShrinksAndThenSendsNothing(t *testing.T) {
	tests := []struct{ from, to int }{{3, 1}, {50, 10}, {2, 0}}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d to %d", tt.from, tt.to), func(t *testing.T) {
			c, direct, counter, owner := cached(t)

			grown := ensureSet(t, c, owner, shards(owner, tt.from))
			if len(grown.Created) != tt.from || len(grown.Children) != tt.from || counter.Writes() != tt.from {
				t.Fatalf("growing to %d created %d and made these requests:\n%s", tt.from, len(grown.Created), counter)
			}
			awaitMembers(t, c, owner.Namespace, tt.from)
			counter.Reset()

			shrunk := ensureSet(t, c, owner, shards(owner, tt.to))
			if want := tt.from - tt.to; len(shrunk.Deleted) != want || counter.Writes() != want || counter.Count("delete", "configmaps") != want {
				t.Errorf("shrinking deleted %v with these requests, want %d deletes and nothing else:\n%s", shrunk.Deleted, want, counter)
			}
			if len(shrunk.Created)+len(shrunk.Updated) != 0 || counter.Reads() != 0 {
				t.Errorf("shrinking did more than delete: %+v\n%s", shrunk, counter)
			}
			var left corev1.ConfigMapList
			if err := direct.List(t.Context(), &left, client.InNamespace(owner.Namespace), client.MatchingLabels(shardLabels)); err != nil {
				t.Fatal(err)
			}
			if len(left.Items) != tt.to {
				t.Errorf("%d members left, want %d", len(left.Items), tt.to)
			}
			awaitMembers(t, c, owner.Namespace, tt.to)
			counter.Reset()

			steady := ensureSet(t, c, owner, shards(owner, tt.to))
			if steady.Changed() || counter.Writes()+counter.Reads() != 0 {
				t.Errorf("a converged set made these requests, want none: %+v\n%s", steady, counter)
			}
		})
	}
}

func TestEnsureSetUpdatesADriftedChildAlone(t *testing.T) {
	c, direct, counter, owner := cached(t)
	ensureSet(t, c, owner, shards(owner, 3))
	awaitMembers(t, c, owner.Namespace, 3)
	drifted := &corev1.ConfigMap{}
	if err := direct.Get(t.Context(), client.ObjectKey{Namespace: owner.Namespace, Name: "shard-1"}, drifted); err != nil {
		t.Fatal(err)
	}
	drifted.Data["shard"] = "tampered"
	if err := direct.Update(t.Context(), drifted); err != nil {
		t.Fatal(err)
	}
	awaitCache(t, c, client.ObjectKeyFromObject(drifted), drifted)
	counter.Reset()

	result := ensureSet(t, c, owner, shards(owner, 3))
	if !slices.Equal(result.Updated, []string{"shard-1"}) || counter.Writes() != 1 {
		t.Errorf("EnsureSet updated %v with these requests, want shard-1 alone:\n%s", result.Updated, counter)
	}
}

func TestEnsureSetLeavesAForeignObjectWithTheSetsLabelAlone(t *testing.T) {
	c, direct, counter, owner := cached(t)
	// One in the way of a desired child, one that is merely labelled like the set.
	inTheWay := child(t, direct, owner, "shard-0", nil, shardLabels)
	bystander := child(t, direct, owner, "someone-elses", nil, shardLabels)
	awaitMembers(t, c, owner.Namespace, 2)
	counter.Reset()

	result, err := ownership.EnsureSet(t.Context(), ownership.NewTestWriter(c), owner, &corev1.ConfigMapList{}, shardLabels, shards(owner, 2))
	if !ownership.IsNotControlled(err) || !strings.Contains(err.Error(), "shard-0") {
		t.Errorf("EnsureSet error = %v, want a NotControlledError naming shard-0", err)
	}
	if !slices.Equal(result.Created, []string{"shard-1"}) || len(result.Deleted) != 0 {
		t.Errorf("EnsureSet = %+v, want shard-1 created and nothing deleted", result)
	}
	if counter.Writes() != 1 || !exists(t, direct, inTheWay) || !exists(t, direct, bystander) {
		t.Errorf("EnsureSet touched objects it does not control:\n%s", counter)
	}
}

func TestEnsureSetRefusesASetItCouldNotKeep(t *testing.T) {
	tests := map[string]struct {
		labels  map[string]string
		list    client.ObjectList // a ConfigMapList when nil
		desired func(owner client.Object) []*corev1.ConfigMap
		want    string
	}{
		"no label, so every object of the kind would be a member": {
			labels: nil, desired: func(o client.Object) []*corev1.ConfigMap { return shards(o, 1) }, want: "at least one label",
		},
		"a child labelled out of the set": {
			labels: shardLabels, want: "never be found",
			desired: func(o client.Object) []*corev1.ConfigMap {
				d := shards(o, 1)
				d[0].Labels = map[string]string{"example.com/shard-of": "another"}
				return d
			},
		},
		"a list of another kind, whose members it would delete": {
			labels: shardLabels, want: "SecretList",
			list:    &corev1.SecretList{},
			desired: func(o client.Object) []*corev1.ConfigMap { return shards(o, 1) },
		},
		"a child listed twice": {
			labels: shardLabels, want: "twice",
			desired: func(o client.Object) []*corev1.ConfigMap { return append(shards(o, 1), shards(o, 1)...) },
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c, counter, owner := clustertest.Setup(t, cp(t))
			list := tt.list
			if list == nil {
				list = &corev1.ConfigMapList{}
			}
			_, err := ownership.EnsureSet(t.Context(), ownership.NewTestWriter(c), owner, list, tt.labels, tt.desired(owner))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("EnsureSet error = %v, want one saying %q", err, tt.want)
			}
			if counter.Writes()+counter.Reads() != 0 {
				t.Errorf("a refused set made requests:\n%s", counter)
			}
		})
	}
}
