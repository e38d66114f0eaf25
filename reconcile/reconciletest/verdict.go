package reconciletest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Verdict is what standard clients read from an object's status: kstatus (Flux, Argo CD)
// and `kubectl wait --for=condition=Ready`.
type Verdict struct {
	// Status and Message are kstatus'.
	Status  kstatus.Status
	Message string
	// Ready is the Ready condition's status, "" without one.
	Ready metav1.ConditionStatus
	// Waited is whether `kubectl wait --for=condition=Ready` would return.
	Waited bool
}

// String reads the verdict in one line, for a test's failure message.
func (v Verdict) String() string {
	return fmt.Sprintf("kstatus %s (%q), Ready=%q, kubectl wait returns: %t", v.Status, v.Message, v.Ready, v.Waited)
}

// VerdictOf reads obj as standard clients do, unstructured, with its kind from scheme (a
// typed object read through a client has none, and kstatus' messages name it).
func VerdictOf(t testing.TB, scheme *runtime.Scheme, obj client.Object) Verdict {
	t.Helper()
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: content}
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		t.Fatal(err)
	}
	u.SetGroupVersionKind(gvk)
	return verdictOf(t, u)
}

// ReadVerdict reads obj from the API server through c as standard clients do, as
// unstructured JSON: what a typed object cannot show, such as a field the Go type omits
// when empty, counts.
func ReadVerdict(t testing.TB, c client.Client, obj client.Object) Verdict {
	t.Helper()
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), u); err != nil {
		t.Fatal(err)
	}
	return verdictOf(t, u)
}

func verdictOf(t testing.TB, u *unstructured.Unstructured) Verdict {
	t.Helper()
	res, err := kstatus.Compute(u)
	if err != nil {
		t.Fatalf("kstatus: %v", err)
	}
	v := Verdict{Status: res.Status, Message: res.Message}
	v.Ready, v.Waited = kubectlWaitReady(u)
	return v
}

// kubectlWaitReady returns the Ready condition's status, and whether `kubectl wait
// --for=condition=Ready` would return, by kubectl's rule (k8s.io/kubectl/pkg/cmd/wait,
// ConditionalWait.checkCondition): the condition is True and was not observed for an
// older generation, by its own observedGeneration or else the status'.
func kubectlWaitReady(u *unstructured.Unstructured) (metav1.ConditionStatus, bool) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		cond, _ := c.(map[string]any)
		if typ, _, _ := unstructured.NestedString(cond, "type"); !strings.EqualFold(typ, "Ready") {
			continue
		}
		s, _, _ := unstructured.NestedString(cond, "status")
		observed, found, _ := unstructured.NestedInt64(cond, "observedGeneration")
		if !found {
			observed, found, _ = unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		}
		stale := found && observed < u.GetGeneration()
		return metav1.ConditionStatus(s), !stale && strings.EqualFold(s, string(metav1.ConditionTrue))
	}
	return "", false
}

// Event is an event an operator records on an object, by type and reason.
type Event struct{ Type, Reason string }

// AwaitEvent waits until an event of want's type and reason regarding obj is in the Env's
// namespace, and returns it.
func (e *Env) AwaitEvent(t testing.TB, obj client.Object, want Event) eventsv1.Event {
	t.Helper()
	var found eventsv1.Event
	Eventually(t, func(ctx context.Context) error {
		var events eventsv1.EventList
		if err := e.List(ctx, &events, client.InNamespace(e.Namespace)); err != nil {
			return err
		}
		var others []string
		for _, ev := range events.Items {
			if ev.Regarding.UID != obj.GetUID() {
				continue
			}
			if ev.Type == want.Type && ev.Reason == want.Reason {
				found = ev
				return nil
			}
			others = append(others, ev.Type+" "+ev.Reason)
		}
		return fmt.Errorf("no %s %s event regarding %s; there are %v", want.Type, want.Reason, obj.GetName(), others)
	})
	return found
}
