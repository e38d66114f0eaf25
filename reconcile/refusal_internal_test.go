package reconcile

import (
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/internal/writerpolicy"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// The refusal of undeclared kinds: the declaration's kinds, named by the scheme, are all the
// Writer may write, a refusal is noted once and makes the reconcile terminal.
func TestTheRefusalOfUndeclaredKinds(t *testing.T) {
	t.Run("declares the kinds the scheme names and refuses the others", func(t *testing.T) {
		type unknown struct{ corev1.ConfigMap }
		d, errs := declare([]client.Object{&corev1.ConfigMap{}, &appsv1.Deployment{}, &unknown{}}, clientgoscheme.Scheme)
		if len(d.owns) != 2 || d.owns[0].Kind != "ConfigMap" || d.owns[1].Kind != "Deployment" {
			t.Errorf("owns = %v; want ConfigMap, Deployment", d.owns)
		}
		if len(errs) != 1 {
			t.Errorf("errors = %v; want one, for the kind the scheme does not know", errs)
		}
	})
	t.Run("a declaration of no kind owns none, not any", func(t *testing.T) {
		d, _ := declare(nil, runtime.NewScheme())
		var p writerpolicy.Policy
		var refused error
		d.bind(&p, &refused)
		if !p.Declared || p.Owns == nil || len(p.Owns) != 0 {
			t.Errorf("policy = %+v; want declared, owning no kind", p)
		}
	})
	t.Run("notes the first refusal only", func(t *testing.T) {
		var p writerpolicy.Policy
		var refused error
		declared{}.bind(&p, &refused)
		first, second := errors.New("first"), errors.New("second")
		p.Refused(first)
		p.Refused(second)
		if refused != first {
			t.Errorf("refused = %v; want the first refusal", refused)
		}
	})
	t.Run("a refusal is terminal whatever the logic returned", func(t *testing.T) {
		refusal := errors.New("refused")
		for _, logic := range []requeue.Outcome{requeue.Done(), requeue.After(1), requeue.Retry(errors.New("other"))} {
			if got := (declared{}).verdict(logic, refusal); !got.IsTerminal() || !errors.Is(got.Err(), refusal) {
				t.Errorf("verdict(%v) = %v; want terminal with the refusal", logic, got)
			}
		}
		if got := (declared{}).verdict(requeue.Done(), nil); got.IsTerminal() || got.Err() != nil {
			t.Errorf("verdict without a refusal = %v; want the logic's outcome", got)
		}
	})
}
