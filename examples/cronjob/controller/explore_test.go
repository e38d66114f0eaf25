package controller_test

import (
	"testing"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1 "github.com/reconcilekit/reconcilekit/examples/cronjob/api/v1"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest/explore"
)

// The CronJob operator explored as Sieve and Acto would: a reference run of the workload,
// then runs killed after one of its writes, with a write failed or its answer lost, and
// with a lagging or coalescing view, each compared with the reference by oracles that
// know nothing of CronJobs. Its schedule is once a year, so that what runs is the same in
// every run: the status, its conditions, and no Job made twice. Budget keeps it short;
// -explore.all explores every point.
func TestExploringTheCronJobOperatorFindsNothing(t *testing.T) {
	cj := hello("")
	cj.Spec.Schedule = "0 0 1 1 *"
	explore.Run(t, explore.Exploration{
		Operator: operator,
		Workload: []explore.Step{
			explore.Create(cj),
			explore.Update("suspended", cj, func(o client.Object) { o.(*batchv1.CronJob).Spec.Suspend = ptr.To(true) }),
			explore.Update("Forbid", cj, func(o client.Object) {
				o.(*batchv1.CronJob).Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent
			}),
			explore.Delete(cj),
		},
		Budget: 3,
	})
}
