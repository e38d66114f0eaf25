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

// A grant is a rule of a role, or one verb of it.
type grant struct {
	rule int
	verb string // empty for the whole rule
}

func (g grant) in(role *rbacv1.ClusterRole) string {
	r := role.Rules[g.rule]
	verbs := strings.Join(r.Verbs, ",")
	if g.verb != "" {
		verbs = g.verb
	}
	return verbs + " " + strings.Join(r.Resources, ",")
}

// without returns role with the grant taken away; a rule left with no verb goes too.
func (g grant) without(role *rbacv1.ClusterRole) *rbacv1.ClusterRole {
	reduced := role.DeepCopy()
	rule := &reduced.Rules[g.rule]
	rule.Verbs = slices.DeleteFunc(rule.Verbs, func(v string) bool { return g.verb == "" || v == g.verb })
	if len(rule.Verbs) == 0 {
		reduced.Rules = slices.Delete(reduced.Rules, g.rule, g.rule+1)
	}
	return reduced
}

// grants returns every rule of the operator's role and, in the full pass, every verb of a
// rule with several.
func (op *operator) grants() []grant {
	var grants []grant
	for i, rule := range op.role.Rules {
		grants = append(grants, grant{rule: i})
		for _, verb := range rule.Verbs {
			if *full && len(rule.Verbs) > 1 {
				grants = append(grants, grant{rule: i, verb: verb})
			}
		}
	}
	return grants
}

// unneeded says why the operator may do all its work here without the grant, or is empty
// if it may not.
func (op *operator) unneeded(g grant) string {
	rule := op.role.Rules[g.rule]
	switch {
	case op.name == "memcached" && webhookGrant(rule, g.verb):
		return "cmd/main.go's webhook certificates and storage migration (--webhook-namespace), which this scenario does not run; " +
			"examples/memcached/cmd's TestManifestsServeTheWebhooksThroughTheirService checks each against the manifests"
	case g.verb == "list":
		return "informers fill their caches with a streaming watch list here; a client or API server without WatchList needs list"
	case g.verb == "get" && (slices.Contains(rule.Resources, op.name+"s") || op.child != "pods" && slices.Contains(rule.Resources, "pods")):
		return "the operator reads these from its cache only; get comes with list and watch by convention"
	case g.verb == "get" && slices.Contains(rule.Resources, "configmaps"):
		return "the ConfigMaps a Memcached names are read from the cache only; get comes with list and watch by convention"
	case g.verb == "get" && slices.Contains(rule.Resources, "pods"):
		return "read only to confirm a cache miss (a pod that exists though the label-restricted cache does not hold it, or a recorded pod the cache lost); this scenario makes neither"
	}
	return ""
}

// webhookGrant reports whether the Memcached operator's rule grants verb for its webhooks'
// certificates (webhook.Certificates: its webhook configurations and CRD, by
// resourceNames) or its storage migration (storage.Migrate: the CRD's status, and a patch
// of every Memcached and its status), not for its controller.
func webhookGrant(rule rbacv1.PolicyRule, verb string) bool {
	switch {
	case len(rule.ResourceNames) > 0:
		return true
	case slices.Contains(rule.Resources, "memcacheds") && verb == "patch":
		return true
	case slices.Contains(rule.Resources, "memcacheds/status") && (verb == "get" || verb == "list"):
		return true
	}
	return false
}

func TestEveryPermissionOfEachGeneratedRoleIsNeeded(t *testing.T) {
	s := sized()
	admin := cp.Client(t, scheme)
	for _, op := range operators {
		for _, g := range op.grants() {
			t.Run(op.name+" without "+g.in(&op.role), func(t *testing.T) {
				role := g.without(&op.role)
				role.ObjectMeta = metav1.ObjectMeta{Name: fmt.Sprintf("%s-without-%d-%s", op.name, g.rule, g.verb)}
				if err := admin.Create(t.Context(), role); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = admin.Delete(context.Background(), role) })
				ns := cp.RestrictedNamespace(t)

				var refused denials
				// Two failed writes of each child make a reconcile error event, and then a
				// series of them: every permission the operator has is put to use.
				cfg := stumble(refused.wrap(cp.ConfigFor(t, role.Name, role.Name)), op.child, 2)
				op.start(t, cfg, ns)
				op.create(t, admin, ns, op.name, 2)
				// Either the operator is refused something, or it gets all its work done,
				// events included, without the grant.
				done := func(ctx context.Context) error {
					if len(refused.list()) > 0 {
						return nil
					}
					return errors.Join(converged(ctx, admin, ns, op), eventSeries(ctx, admin, ns))
				}
				await(t, s.limit, done)
				// Creating is half the work: a new size makes the operator update what it
				// made.
				if op.resize != nil && len(refused.list()) == 0 {
					op.resizeNamed(t, admin, ns, op.name+"-0", op.name+"-1")
					await(t, s.limit, done)
				}
				switch why := op.unneeded(g); {
				case len(refused.list()) > 0:
					t.Logf("refused %s", refused.list()[0])
				case why != "":
					t.Skip("not needed here: " + why)
				default:
					t.Errorf("the operator did all its work without %s: the role grants more than it needs", g.in(&op.role))
				}
			})
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
