package reconcile_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/internal/fight"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// loggingClient is what a logic may wrap the Scope's client in: a log of the writes, by
// embedding client.Client, as a metrics or dry-run client would. It implements nothing
// else the shell's client does.
type loggingClient struct {
	client.Client
	mu     *sync.Mutex
	writes *[]string
}

func (c loggingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.mu.Lock()
	*c.writes = append(*c.writes, "patch "+obj.GetName())
	c.mu.Unlock()
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c loggingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.mu.Lock()
	*c.writes = append(*c.writes, "create "+obj.GetName())
	c.mu.Unlock()
	return c.Client.Create(ctx, obj, opts...)
}

// TestAWriterWhoseClientTheLogicWrapsKeepsItsDeclaration gives the Scope's Writer a client
// wrapped by the logic: the Writer still writes only the kinds its declaration owns, a
// refused kind still stalls the reconcile, and a fight over a child is still detected.
// The declaration is the Writer's own, not something found by probing its client.
func TestAWriterWhoseClientTheLogicWrapsKeepsItsDeclaration(t *testing.T) {
	c := cp(t).Client(t, withBuiltins)
	ns := cp(t).Namespace(t)
	var mu sync.Mutex
	var writes []string
	wrap := func(s reconcile.Scope) ownership.Writer {
		w := s.Writer
		w.Client = loggingClient{Client: w.Client, mu: &mu, writes: &writes}
		return w
	}

	t.Run("an undeclared kind is refused and stalls the object", func(t *testing.T) {
		widget := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "refused"}}
		if err := c.Create(t.Context(), widget); err != nil {
			t.Fatal(err)
		}
		var refusal error
		r := reconcile.ShellOf(c, reconcile.For(&Widget{}, reconcile.LogicFunc[*Widget](func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: "undeclared"}}
			_, _, refusal = ownership.Ensure(ctx, wrap(s), w, secret)
			return requeue.Done() // the logic swallows the error: the shell must not
		}), reconcile.TestFieldOwner, reconcile.WithChildren(&corev1.ConfigMap{})), reconcile.WithRecorder(events.NewFakeRecorder(10)))

		_, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(widget)})
		if !ownership.IsUndeclared(refusal) {
			t.Errorf("Ensure of an undeclared Secret = %v; want an *ownership.UndeclaredError", refusal)
		}
		if !errors.Is(err, crreconcile.TerminalError(nil)) {
			t.Errorf("Reconcile = %v; want a terminal error: the refusal is a wiring mistake", err)
		}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "undeclared"}, &corev1.Secret{}); err == nil {
			t.Error("the undeclared Secret was created")
		}
		live := &Widget{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(widget), live); err != nil {
			t.Fatal(err)
		}
		if s := conditions.Find(live, conditions.Stalled); s == nil || s.Status != metav1.ConditionTrue || !strings.Contains(s.Message, "WithChildren") {
			t.Errorf("Stalled = %+v; want True, naming the WithChildren line", s)
		}
	})

	t.Run("a fight over a child is detected", func(t *testing.T) {
		widget := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fought"}}
		if err := c.Create(t.Context(), widget); err != nil {
			t.Fatal(err)
		}
		var fighting error
		r := reconcile.ShellOf(c, reconcile.For(&Widget{}, reconcile.LogicFunc[*Widget](func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: "fought"}, Data: map[string]string{"size": "1"}}
			_, _, err := ownership.Ensure(ctx, wrap(s), w, cm)
			if ownership.IsFighting(err) && fighting == nil {
				fighting = err
			}
			return requeue.Done()
		}), reconcile.TestFieldOwner, reconcile.WithChildren(&corev1.ConfigMap{})),
			reconcile.WithRecorder(events.NewFakeRecorder(100)), reconcile.WithExpectationTimeout(0))
		req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(widget)}
		if _, err := r.Reconcile(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		// Someone else sets the field back before every reconcile: the Writer puts it back
		// each time, until it sees the fight.
		for round := 1; round <= 2*fight.Reverts && fighting == nil; round++ {
			other := corev1ac.ConfigMap("fought", ns).WithData(map[string]string{"size": "5"})
			if err := c.Apply(t.Context(), other, client.FieldOwner("size-fighter"), client.ForceOwnership); err != nil {
				t.Fatal(err)
			}
			_, _ = r.Reconcile(t.Context(), req)
		}
		if !ownership.IsFighting(fighting) {
			t.Fatalf("no fight detected in %d rounds of another field manager's writes through a wrapped client", 2*fight.Reverts)
		}
		if !strings.Contains(fighting.Error(), "size-fighter") {
			t.Errorf("fight = %v; want it to name the other field manager", fighting)
		}
	})

	mu.Lock()
	defer mu.Unlock()
	if len(writes) == 0 {
		t.Error("the wrapped client saw no write: the test does not exercise it")
	}
}
