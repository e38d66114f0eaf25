package reliability

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A grant is one verb of one rule of a role: the smallest permission there is to take away.
type grant struct {
	rule int
	verb string
}

func (g grant) in(role *rbacv1.ClusterRole) string {
	r := role.Rules[g.rule]
	return g.verb + " " + strings.Join(r.Resources, ",")
}

// without returns role with the grant taken away, and with the rule gone if that was its
// last verb.
func (g grant) without(role *rbacv1.ClusterRole) *rbacv1.ClusterRole {
	reduced := role.DeepCopy()
	rule := &reduced.Rules[g.rule]
	rule.Verbs = slices.DeleteFunc(rule.Verbs, func(v string) bool { return v == g.verb })
	if len(rule.Verbs) == 0 {
		reduced.Rules = slices.Delete(reduced.Rules, g.rule, g.rule+1)
	}
	return reduced
}

func TestEveryPermissionOfEachGeneratedRoleIsNeeded(t *testing.T) {
	s := sized()
	admin := cp.Client(t, scheme)
	for _, op := range operators {
		for i, rule := range op.role.Rules {
			for _, verb := range rule.Verbs {
				g := grant{rule: i, verb: verb}
				t.Run(op.name+" without "+g.in(&op.role), func(t *testing.T) {
					if slices.ContainsFunc(rule.Resources, func(r string) bool { return strings.HasSuffix(r, "/finalizers") }) {
						// The OwnerReferencesPermissionEnforcement admission plugin asks for it, to
						// set blockOwnerDeletion; the test API server does not run that plugin.
						t.Skip("needed only where the API server enforces owner reference permissions")
					}
					role := g.without(&op.role)
					role.ObjectMeta = metav1.ObjectMeta{Name: fmt.Sprintf("%s-without-%d-%s", op.name, i, verb)}
					if err := admin.Create(t.Context(), role); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { _ = admin.Delete(context.Background(), role) })
					ns := cp.RestrictedNamespace(t)

					var refused denials
					cfg := stumble(refused.wrap(cp.ConfigFor(t, role.Name, role.Name)), op.child, 2)
					op.start(t, cfg, ns)
					op.create(t, admin, ns, op.name, 2)
					// Either the operator is refused something, or it gets all its work done,
					// events included, without the permission.
					await(t, s.limit, func(ctx context.Context) error {
						if len(refused.list()) > 0 {
							return nil
						}
						return errors.Join(converged(ctx, admin, ns, op), eventSeries(ctx, admin, ns))
					})
					if len(refused.list()) == 0 {
						t.Errorf("the operator did all its work without %s: the role grants more than it needs", g.in(&op.role))
					}
				})
			}
		}
	}
}

// eventSeries returns nil once an event in ns has been seen more than once: recorded with
// a create, then counted with a patch.
func eventSeries(ctx context.Context, c client.Client, ns string) error {
	var events eventsv1.EventList
	if err := c.List(ctx, &events, client.InNamespace(ns)); err != nil {
		return err
	}
	for _, e := range events.Items {
		if e.Series != nil {
			return nil
		}
	}
	return fmt.Errorf("no event seen twice among %d", len(events.Items))
}

func TestOperatorPodsPassRestrictedPodSecurity(t *testing.T) {
	s := sized()
	admin := cp.Client(t, scheme)
	ns := cp.RestrictedNamespace(t)

	// The namespace refuses a pod that does not meet the restricted level.
	loose := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "loose"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "loose", Image: "busybox"}}},
	}
	if err := admin.Create(t.Context(), loose, client.DryRunAll); !apierrors.IsForbidden(err) {
		t.Fatalf("a pod with no security context was not refused: %v", err)
	}

	for _, op := range operators {
		op.start(t, op.config(t), ns)
		op.create(t, admin, ns, op.name, s.objects)
	}
	await(t, s.limit, func(ctx context.Context) error { return converged(ctx, admin, ns, operators...) })
	running, err := pods(t.Context(), admin, ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the namespace admitted all %d pods of the operators' %d objects", len(running), 3*s.objects)
}
