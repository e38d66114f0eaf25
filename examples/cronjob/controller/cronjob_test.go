package controller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	kbatch "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	batchv1 "github.com/reconcilekit/reconcilekit/examples/cronjob/api/v1"
	"github.com/reconcilekit/reconcilekit/jobs"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// hello is a CronJob that prints the date every minute, in the test's namespace.
func hello(ns string) *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"},
		Spec: batchv1.CronJobSpec{
			Schedule: "* * * * *",
			JobTemplate: kbatch.JobTemplateSpec{Spec: kbatch.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "hello", Image: "busybox:1.36", Command: []string{"date"}}},
			}}}},
		},
	}
}

// TestACronJobRunsItsJobOnTheCluster waits for the first run of a CronJob that runs every
// minute, up to a minute: its Job is created on the minute, its pod runs on a simulated
// node where the namespace enforces the restricted Pod Security level, and the CronJob
// records the success, Ready all along once it has reported.
func TestACronJobRunsItsJobOnTheCluster(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	cj := hello(e.Namespace)
	if err := e.Client.Create(t.Context(), cj); err != nil {
		t.Fatal(err)
	}
	// Ready before any run: kubectl wait --for=condition=Ready returns at once.
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Client.Get(ctx, client.ObjectKeyFromObject(cj), cj); err != nil {
			return err
		}
		if !conditions.IsTrue(cj, conditions.Ready) || cj.Status.ObservedGeneration != cj.Generation {
			return fmt.Errorf("not Ready: %+v", cj.Status.Conditions)
		}
		return nil
	})
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if err := e.Client.Get(t.Context(), client.ObjectKeyFromObject(cj), cj); err != nil {
			t.Fatal(err)
		}
		if cj.Status.LastSuccessfulTime != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no run succeeded in 3 minutes; status %+v", cj.Status)
		}
		time.Sleep(time.Second)
	}
	owned, err := jobs.List(t.Context(), e.Client, cj, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(owned) != 1 {
		t.Fatalf("%d jobs, want the one run", len(owned))
	}
	job := owned[0]
	scheduled, ok := jobs.ScheduledTime(&job)
	if !ok || job.Name != jobs.Name(cj.Name, scheduled) || !cj.Status.LastScheduleTime.Time.Equal(scheduled) {
		t.Errorf("job %s scheduled at %s; the CronJob's last schedule %s", job.Name, scheduled, cj.Status.LastScheduleTime)
	}
	if o := jobs.OutcomeOf(&job); o.State != jobs.Succeeded || !o.Finished {
		t.Errorf("the job's outcome %+v, want finished, succeeded", o)
	}
	if a := conditions.Find(cj, conditions.Available); a == nil || a.Reason != jobs.ReasonLastRunSucceeded || !conditions.IsTrue(cj, conditions.Ready) {
		t.Errorf("conditions %+v, want Available LastRunSucceeded and Ready", cj.Status.Conditions)
	}
	if sc := job.Spec.Template.Spec.SecurityContext; sc == nil || !ptr.Deref(sc.RunAsNonRoot, false) {
		t.Errorf("the job's pods are not restricted: %+v", sc)
	}
}
