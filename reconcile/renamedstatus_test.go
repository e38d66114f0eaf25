package reconcile_test

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// Meter is a kind whose status field has another Go name than Status: the API server
// knows it by its JSON key alone. testdata/crd/meter.yaml declares it.
type Meter struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec     MeterSpec   `json:"spec,omitempty"`
	Observed MeterStatus `json:"status,omitempty"`
}

// MeterSpec is what a Meter should read.
type MeterSpec struct {
	Size int32 `json:"size,omitempty"`
}

// MeterStatus is what was last seen of a Meter.
type MeterStatus struct {
	Reading            int32              `json:"reading,omitempty"`
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// MeterList is a list of Meters.
type MeterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Meter `json:"items"`
}

var (
	_ conditions.Setter                  = &Meter{}
	_ reconcile.ObservedGenerationSetter = &Meter{}
)

func (m *Meter) GetConditions() []metav1.Condition  { return m.Observed.Conditions }
func (m *Meter) SetConditions(c []metav1.Condition) { m.Observed.Conditions = c }
func (m *Meter) SetObservedGeneration(g int64)      { m.Observed.ObservedGeneration = g }

// DeepCopyObject implements runtime.Object.
func (m *Meter) DeepCopyObject() runtime.Object {
	out := *m
	m.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Observed.Conditions = slices.Clone(m.Observed.Conditions)
	return &out
}

// DeepCopyObject implements runtime.Object.
func (l *MeterList) DeepCopyObject() runtime.Object {
	out := &MeterList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopyObject().(*Meter))
	}
	return out
}

// The shell finds a kind's status by its JSON key, "status", whatever the Go field is
// called: it writes it through the status subresource, and does not refuse it as a change
// outside the status; a reconcile that changes nothing writes nothing.
func TestShellWritesAStatusFieldOfAnotherName(t *testing.T) {
	gv := schema.GroupVersion{Group: "test.reconcilekit.io", Version: "v1"}
	meters := runtime.NewScheme()
	meters.AddKnownTypes(gv, &Meter{}, &MeterList{})
	metav1.AddToGroupVersion(meters, gv)
	counter := &reconciletest.Counter{}
	c, err := client.New(counter.Wrap(cp(t).Config), client.Options{Scheme: meters})
	if err != nil {
		t.Fatal(err)
	}
	meter := &Meter{ObjectMeta: metav1.ObjectMeta{Namespace: cp(t).Namespace(t), Name: "meter"}, Spec: MeterSpec{Size: 3}}
	if err := c.Create(t.Context(), meter); err != nil {
		t.Fatal(err)
	}
	r := reconcile.NewShell(c, reconcile.LogicFunc[*Meter](func(_ context.Context, m *Meter, _ reconcile.Scope) requeue.Outcome {
		m.Observed.Reading = m.Spec.Size
		return requeue.Done()
	}), reconcile.WithClock(reconciletest.NewClock(now)))
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(meter)}
	if _, err := r.Reconcile(t.Context(), req); err != nil {
		t.Fatalf("reconcile: %v; want the status written", err)
	}
	live := &Meter{}
	if err := c.Get(t.Context(), req.NamespacedName, live); err != nil {
		t.Fatal(err)
	}
	if live.Observed.Reading != 3 || live.Observed.ObservedGeneration != live.Generation || !conditions.IsTrue(live, conditions.Ready) {
		t.Errorf("status %+v; want reading 3, observedGeneration %d and Ready", live.Observed, live.Generation)
	}
	reconciletest.ExpectNoWrites(t, counter, func() {
		if _, err := r.Reconcile(t.Context(), req); err != nil {
			t.Errorf("reconcile again: %v", err)
		}
	})
}
