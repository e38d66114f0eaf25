package reconcile_test

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/reconcilekit/reconcilekit/phase"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Widget is the object these tests reconcile: the smallest API type with a spec, a phase,
// conditions and an observedGeneration. testdata/crd/widget.yaml declares it.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WidgetSpec   `json:"spec,omitempty"`
	Status WidgetStatus `json:"status,omitempty"`
}

// WidgetSpec is what a Widget should be.
type WidgetSpec struct {
	Size    int32 `json:"size,omitempty"`
	Suspend bool  `json:"suspend,omitempty"`
}

// WidgetStatus is what was last seen of a Widget.
type WidgetStatus struct {
	Phase                  string             `json:"phase,omitempty"`
	Conditions             []metav1.Condition `json:"conditions,omitempty"`
	ObservedGeneration     int64              `json:"observedGeneration,omitempty"`
	LastHandledReconcileAt string             `json:"lastHandledReconcileAt,omitempty"`
}

// WidgetList is a list of Widgets, which a manager's cache needs.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Widget `json:"items"`
}

// A Widget is what the shell and a phase.Machine work with.
var (
	_ phase.Object                       = &Widget{}
	_ reconcile.ObservedGenerationSetter = &Widget{}
	_ reconcile.RequestStatus            = &Widget{}
)

func (w *Widget) GetConditions() []metav1.Condition  { return w.Status.Conditions }
func (w *Widget) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }
func (w *Widget) GetPhase() string                   { return w.Status.Phase }
func (w *Widget) SetPhase(p string)                  { w.Status.Phase = p }
func (w *Widget) SetObservedGeneration(g int64)      { w.Status.ObservedGeneration = g }
func (w *Widget) GetLastHandledReconcileAt() string  { return w.Status.LastHandledReconcileAt }
func (w *Widget) SetLastHandledReconcileAt(v string) { w.Status.LastHandledReconcileAt = v }

// DeepCopyInto copies w into out. Conditions are plain values, so cloning the slice copies
// them deeply.
func (w *Widget) DeepCopyInto(out *Widget) {
	*out = *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = slices.Clone(w.Status.Conditions)
}

// DeepCopyObject implements runtime.Object.
func (w *Widget) DeepCopyObject() runtime.Object {
	out := new(Widget)
	w.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (l *WidgetList) DeepCopyObject() runtime.Object {
	out := &WidgetList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]Widget, len(l.Items))
	for i := range l.Items {
		l.Items[i].DeepCopyInto(&out.Items[i])
	}
	return out
}

// scheme knows Widgets.
var scheme = func() *runtime.Scheme {
	gv := schema.GroupVersion{Group: "test.reconcilekit.io", Version: "v1"}
	s := runtime.NewScheme()
	s.AddKnownTypes(gv, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, gv)
	return s
}()
