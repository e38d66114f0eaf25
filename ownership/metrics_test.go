package ownership_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/internal/clustertest"
	"github.com/reconcilekit/reconcilekit/internal/telemetry"
	"github.com/reconcilekit/reconcilekit/ownership"
)

// deploymentWrites is what reconcilekit_writes_total says of the Deployments written.
func deploymentWrites() float64 {
	var sum float64
	for _, write := range []string{telemetry.Create, telemetry.Update, telemetry.Delete} {
		for _, changed := range []string{"true", "false"} {
			sum += testutil.ToFloat64(telemetry.Writes.WithLabelValues("Deployment", write, changed))
		}
	}
	return sum
}

func TestEnsureCountsEveryWriteItSends(t *testing.T) {
	tests := []struct {
		name string
		// change leaves the Deployment so that the next Ensure of desired sends more than
		// its apply, and returns that desired object.
		change func(t *testing.T, c client.Client, owner client.Object) (desired client.Object)
	}{
		{name: "a list element someone re-keyed, removed before the apply", change: func(t *testing.T, c client.Client, owner client.Object) client.Object {
			live, _ := ensure(t, c, owner, clustertest.Deployment(owner))
			live.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort = 1235
			if err := c.Update(t.Context(), live, client.FieldOwner("someone-else")); err != nil {
				t.Fatal(err)
			}
			return clustertest.Deployment(owner)
		}},
		{name: "the created fields handed over before a field is removed", change: func(t *testing.T, c client.Client, owner client.Object) client.Object {
			withEnv := clustertest.Deployment(owner)
			withEnv.Spec.Template.Spec.Containers[0].Env = nil
			withEnv.Annotations = map[string]string{"tier": "gold"}
			ensure(t, c, owner, withEnv)
			return clustertest.Deployment(owner)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, counter, owner := clustertest.Setup(t, cp(t))
			want := tt.change(t, c, owner)
			counter.Reset()
			before := deploymentWrites()
			if _, _, err := ownership.Ensure(t.Context(), ownership.NewTestWriter(c), owner, want); err != nil {
				t.Fatal(err)
			}
			sent, counted := counter.Count("patch", "deployments"), deploymentWrites()-before
			if sent < 2 || counted != float64(sent) {
				t.Errorf("Ensure sent %d patches and reconcilekit_writes_total counted %v; want the two (or more) counted alike", sent, counted)
			}
		})
	}
}
