package phase_test

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/reconcilekit/reconcilekit/phase"
)

// now is the time of these tests' reconciles.
var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Widget is the object these tests drive: the smallest API type with a spec, a phase and
// conditions. The Machine runs on it without an API server; the shell's tests in reconcile
// run it through one.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WidgetSpec   `json:"spec,omitempty"`
	Status WidgetStatus `json:"status,omitempty"`
}

// WidgetSpec is what a Widget should be.
type WidgetSpec struct {
	Size int32 `json:"size,omitempty"`
}

// WidgetStatus is what was last seen of a Widget.
type WidgetStatus struct {
	Phase      string             `json:"phase,omitempty"`
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// A Widget is what the Machine works with.
var _ phase.Object = &Widget{}

func (w *Widget) GetConditions() []metav1.Condition  { return w.Status.Conditions }
func (w *Widget) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }
func (w *Widget) GetPhase() string                   { return w.Status.Phase }
func (w *Widget) SetPhase(p string)                  { w.Status.Phase = p }

// DeepCopyObject implements runtime.Object.
func (w *Widget) DeepCopyObject() runtime.Object {
	out := *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = slices.Clone(w.Status.Conditions)
	return &out
}
