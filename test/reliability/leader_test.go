package reliability

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// The lease timing of the leader election scenario: short, so that a crashed leader's
// lease expires quickly.
const (
	leaseDuration = 6 * time.Second
	renewDeadline = 4 * time.Second
	retryPeriod   = time.Second
)

// candidate is one replica of an operator that runs with leader election.
type candidate struct {
	*reconciletest.Manager
	requests *reconciletest.Counter
	plug     *plug
}

// work is how much of the At operator's work the candidate has done: pods created and
// statuses written.
func (c *candidate) work() int {
	return c.requests.Count("create", "pods") + c.requests.Count("patch", "ats/status") + c.requests.Count("update", "ats/status")
}

func TestOnlyTheLeaderReconcilesAndAStandbyTakesOver(t *testing.T) {
	s := sized()
	admin := cp.Client(t, scheme)
	ns := cp.RestrictedNamespace(t)
	op := atOperator
	grantLeaderElection(t, admin, ns, op)
	cfg := op.config(t)
	var created ledger
	watchStatus(t, ns, op)

	elect := func(o *manager.Options) {
		o.LeaderElection = true
		o.LeaderElectionID = "at.cnat.example.com" // as cmd/main.go
		o.LeaderElectionNamespace = ns
		o.LeaderElectionReleaseOnCancel = true // as cmd/main.go
		o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = new(leaseDuration), new(renewDeadline), new(retryPeriod)
	}
	start := func() *candidate {
		c := &candidate{requests: &reconciletest.Counter{}, plug: &plug{}}
		c.Manager = op.start(t, c.requests.Wrap(c.plug.wrap(created.wrap(cfg))), ns, elect)
		return c
	}
	converge := func(prefix string) {
		t.Helper()
		op.create(t, admin, ns, prefix, s.objects)
		await(t, s.limit, func(ctx context.Context) error { return converged(ctx, admin, ns, op) })
	}

	a, b := start(), start()
	leader, standby := awaitLeader(t, s.limit, a, b)
	converge("first")
	if n := standby.work(); n > 0 {
		t.Errorf("the standby did %d pieces of work while another led", n)
	}

	// A leader that stops releases its lease: the standby takes over at its next look.
	leader.Stop()
	awaitLeader(t, s.limit, standby)
	leader, standby = standby, start()
	converge("second")
	if n := standby.work(); n > 0 {
		t.Errorf("the new standby did %d pieces of work while another led", n)
	}

	// A leader that crashes keeps its lease until it expires.
	crashed := time.Now()
	leader.plug.pull()
	leader.Stop()
	awaitLeader(t, s.limit, standby)
	took := time.Since(crashed)
	// The standby looks at the lease every retry period, up to 2.2 of them apart with
	// client-go's jitter: it takes over between one lease duration and that plus two
	// looks after the last renewal, which came at the latest when the leader crashed.
	if limit := leaseDuration + 5*retryPeriod; took > limit {
		t.Errorf("the standby took over %v after the leader crashed; want at most %v", took, limit)
	}
	converge("third")
	pods := created.check(t)
	t.Logf("three leaders in turn; %d At pods created for %d Ats; a crashed leader's lease (%v) taken over after %v",
		pods, 3*s.objects, leaseDuration, took.Round(100*time.Millisecond))
}

// awaitLeader waits until one of the candidates is elected, and returns it and the
// first of the others.
func awaitLeader(t *testing.T, limit time.Duration, candidates ...*candidate) (leader, standby *candidate) {
	t.Helper()
	timeout := time.After(limit)
	for {
		for i, c := range candidates {
			select {
			case <-c.Elected():
				if len(candidates) > 1 {
					standby = candidates[(i+1)%len(candidates)]
				}
				return c, standby
			default:
			}
		}
		select {
		case <-timeout:
			t.Fatalf("no candidate was elected within %v", limit)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// grantLeaderElection gives the operator's user, in ns, the Role its config/rbac grants for
// leader election.
func grantLeaderElection(t *testing.T, c client.Client, ns string, op *operator) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", op.name, "config", "rbac", "leader_election_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.Role
	if err := yaml.Unmarshal(data, &role); err != nil {
		t.Fatal(err)
	}
	role.Namespace = ns
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: op.user()}},
	}
	if err := errors.Join(c.Create(t.Context(), &role), c.Create(t.Context(), binding)); err != nil {
		t.Fatal(err)
	}
}
