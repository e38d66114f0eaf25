package reliability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func TestOperatorsSurviveCrashesAtAnyMoment(t *testing.T) {
	s := sized()
	admin := cp.Client(t, scheme)
	ns := cp.RestrictedNamespace(t)
	seed := rand.Uint64()
	random := rand.New(rand.NewPCG(seed, seed))
	t.Logf("crash moments drawn with seed %d", seed)

	var created ledger
	configs := map[*operator]*rest.Config{}
	for _, op := range operators {
		watchStatus(t, ns, op)
		configs[op] = created.wrap(op.config(t))
	}
	batch := max(1, s.objects/s.crashes)
	crashes := map[string]int{} // by operator, the lives that ended before its work did
	podCrashes := 0
	for life := range s.crashes {
		// Every life of the operators finds work: new objects, and new sizes for some.
		for _, op := range operators {
			op.create(t, admin, ns, fmt.Sprintf("%s-%d", op.name, life), batch)
		}
		if life > 0 {
			// The first object of the life before, of each kind that has a size.
			for _, op := range operators {
				op.resizeNamed(t, admin, ns, fmt.Sprintf("%s-%d-0", op.name, life-1))
			}
		}

		var plugs []*plug
		var managers []*reconciletest.Manager
		for _, op := range operators {
			p := &plug{trigger: afterWrites(1 + random.IntN(4*batch))}
			if op == atOperator && life%2 == 0 {
				// Between the pod that runs the command and the status that records it.
				p.trigger = podCreated
			}
			plugs = append(plugs, p)
			managers = append(managers, op.start(t, p.wrap(configs[op]), ns))
		}
		// Until every operator has crashed, or has nothing left to do: one that ran out of
		// work before its crash came cannot wait for the objects of one that crashed.
		await(t, s.limit, func(ctx context.Context) error {
			for i, p := range plugs {
				if !p.isPulled() {
					if err := converged(ctx, admin, ns, operators[i]); err != nil {
						return err
					}
				}
			}
			return nil
		})
		for i, m := range managers {
			if plugs[i].isPulled() {
				crashes[operators[i].name]++
				if operators[i] == atOperator && life%2 == 0 {
					podCrashes++
				}
			}
			plugs[i].pull()
			m.Stop()
		}
	}

	for _, op := range operators {
		op.start(t, configs[op], ns)
	}
	await(t, s.limit, func(ctx context.Context) error { return converged(ctx, admin, ns, operators...) })
	pods := created.check(t)
	t.Logf("%d lives of each operator, ended by a crash in the middle of their work: Memcached %d, PodSet %d, At %d, %d of those right after it created a pod; %d objects of each kind converged, %d At pods created",
		s.crashes, crashes[memcachedOperator.name], crashes[podsetOperator.name], crashes[atOperator.name], podCrashes, batch*s.crashes, pods)
}

// afterWrites triggers after n writes the API server accepted.
func afterWrites(n int) func(*reconciletest.Request, *http.Response) bool {
	return func(req *reconciletest.Request, r *http.Response) bool {
		if req.IsWrite() && r.StatusCode < 300 {
			n--
		}
		return n <= 0
	}
}

// podCreated triggers once the API server has created a pod.
func podCreated(req *reconciletest.Request, r *http.Response) bool {
	return req.Verb == "create" && req.Resource == "pods" && req.Subresource == "" && r.StatusCode == http.StatusCreated
}
