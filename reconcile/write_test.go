package reconcile_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
)

func TestShellWritesWhatTheLogicChangedThroughTheRightRequestOnce(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Widget)
		want   map[string]int // requests by "verb resource"
	}{{
		name:   "status through the status subresource",
		change: func(w *Widget) { w.Status.Phase = "Sized" },
		want:   map[string]int{"patch widgets/status": 1},
	}, {
		name: "labels and annotations with a patch of the object",
		change: func(w *Widget) {
			w.Labels = map[string]string{"size": "small"}
			w.Annotations = map[string]string{"seen": "yes"}
		},
		want: map[string]int{"patch widgets": 1},
	}, {
		name: "metadata and status, each through its request",
		change: func(w *Widget) {
			w.Labels = map[string]string{"size": "small"}
			w.Status.Phase = "Sized"
		},
		want: map[string]int{"patch widgets": 1, "patch widgets/status": 1},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			r := f.reconciler(func(_ context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
				tt.change(w)
				return requeue.Done()
			})
			if _, err := f.reconcile(t, r); err != nil {
				t.Fatal(err)
			}
			// The first reconcile also writes Ready; count the writes the change adds.
			got := map[string]int{}
			for _, verb := range []string{"patch", "update", "create"} {
				for _, res := range []string{"widgets", "widgets/status"} {
					if n := f.counter.Count(verb, res); n > 0 {
						got[verb+" "+res] = n
					}
				}
			}
			if _, ok := tt.want["patch widgets/status"]; !ok {
				delete(got, "patch widgets/status") // Ready alone
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("requests %v, want %v\n%s", got, tt.want, f.counter)
			}
			live := f.live(t)
			want := &Widget{}
			live.DeepCopyInto(want)
			tt.change(want)
			if live.Status.Phase != want.Status.Phase || !maps.Equal(live.Labels, want.Labels) || !maps.Equal(live.Annotations, want.Annotations) {
				t.Errorf("live object lacks the change: %+v", live)
			}
			reconciletest.ExpectNoWrites(t, f.counter, func() {
				if _, err := f.reconcile(t, r); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

func TestShellRefusesAndReportsAChangeToTheSpec(t *testing.T) {
	f := newFixture(t)
	r := f.reconciler(func(_ context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		w.Spec.Size = 7 // the spec is the user's: the shell must not write it
		w.Status.Phase = "Sized"
		return requeue.Done()
	})
	_, err := f.reconcile(t, r)
	if !errors.Is(err, crreconcile.TerminalError(nil)) || !reconcile.IsUnwritable(err) || !strings.Contains(err.Error(), "spec") {
		t.Errorf("error = %v; want a terminal error naming spec", err)
	}
	live := f.live(t)
	if live.Spec.Size != 1 || live.Status.Phase != "Sized" {
		t.Errorf("size %d, phase %q; want the spec untouched and the status written", live.Spec.Size, live.Status.Phase)
	}
	if c := conditions.Find(live, conditions.Stalled); c == nil || !strings.Contains(c.Message, "spec") {
		t.Errorf("Stalled = %+v; want it to name the refused change", c)
	}

	// No futile write: the same refusal again changes nothing on the server.
	reconciletest.ExpectNoWrites(t, f.counter, func() { _, _ = f.reconcile(t, r) })
}

func TestShellWritesAsItsFieldOwner(t *testing.T) {
	f := newFixture(t)
	r := f.reconciler(func(_ context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		w.Status.Phase = "Sized"
		return requeue.Done()
	}, reconcile.OverrideFieldOwner("widget-operator"))
	if _, err := f.reconcile(t, r); err != nil {
		t.Fatal(err)
	}
	var managers []string
	for _, m := range f.live(t).ManagedFields {
		managers = append(managers, m.Manager+"/"+m.Subresource)
	}
	if !strings.Contains(strings.Join(managers, " "), "widget-operator/status") {
		t.Errorf("field managers %q; want widget-operator for the status", managers)
	}
}
