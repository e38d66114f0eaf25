package reconciletest

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// runner gives each Deployment one Job, named after it, that runs its pod template once.
type runner struct{ c client.Client }

func (r *runner) Reconcile(ctx context.Context, req rtreconcile.Request) (rtreconcile.Result, error) {
	dep := &appsv1.Deployment{}
	if err := r.c.Get(ctx, req.NamespacedName, dep); err != nil {
		return rtreconcile.Result{}, client.IgnoreNotFound(err)
	}
	job := runOf(dep)
	job.Namespace = dep.Namespace
	if err := controllerutil.SetControllerReference(dep, job, r.c.Scheme()); err != nil {
		return rtreconcile.Result{}, err
	}
	err := r.c.Get(ctx, client.ObjectKeyFromObject(job), &batchv1.Job{})
	if apierrors.IsNotFound(err) {
		return rtreconcile.Result{}, r.c.Create(ctx, job)
	}
	return rtreconcile.Result{}, err
}

// runOf is the Job runner wants for dep, as a table writes it: no namespace, an owner
// reference without a UID, and no selector: the API server generates it.
func runOf(dep *appsv1.Deployment) *batchv1.Job {
	template := *dep.Spec.Template.DeepCopy()
	template.Spec.RestartPolicy = corev1.RestartPolicyNever
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: dep.Name + "-run", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "Deployment", Name: dep.Name, Controller: new(true), BlockOwnerDeletion: new(true)}}},
		Spec: batchv1.JobSpec{Template: template},
	}
}

// finished is j with the status of a Job that succeeded: SuccessCriteriaMet, which the
// API server requires before Complete, Complete, and the times they need.
func finished(j *batchv1.Job) *batchv1.Job {
	start := metav1.NewTime(DefaultNow.Add(-time.Minute))
	end := metav1.NewTime(DefaultNow)
	j.Status = batchv1.JobStatus{StartTime: &start, CompletionTime: &end, Succeeded: 1, Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: end},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: end},
	}}
	return j
}

func TestReconcilerTestsCompareJobs(t *testing.T) {
	table := ReconcilerTests{ControlPlane: StartAPIServer(t), Reconciler: func(d Deps) rtreconcile.Reconciler { return &runner{d.Client} }}

	t.Run("cases that hold", func(t *testing.T) {
		table := table
		table.Cases = []ReconcilerTestCase{{
			// The API server labels a Job's pods with its name and UID and selects them by
			// the UID; a dry run would label them with another name and UID.
			Name:         "a Job compares without the selector and labels the API server gave it",
			Object:       web("busybox"),
			WantRequests: []string{"create jobs"},
			WantObjects:  []client.Object{runOf(web("busybox"))},
		}, {
			Name:        "a Job given a finished status is found, and nothing is created",
			Object:      web("busybox"),
			Given:       []client.Object{finished(runOf(web("busybox")))},
			WantObjects: []client.Object{runOf(web("busybox"))},
		}}
		table.Run(t)
	})

	t.Run("the labels a case sets itself are compared", func(t *testing.T) {
		want := runOf(web("busybox"))
		want.Spec.Template.Labels[batchv1.JobNameLabel] = "another-run"
		rec := &errorRecorder{TB: t}
		table.RunCase(rec, ReconcilerTestCase{
			Name:         "own label",
			Object:       web("busybox"),
			WantRequests: []string{"create jobs"},
			WantObjects:  []client.Object{want},
		})
		msg := strings.Join(strings.Fields(rec.message()), " ")
		if !strings.Contains(msg, "Job web-run (-want +got)") || !strings.Contains(msg, `"another-run"`) {
			t.Errorf("a case that wants a job-name label of its own said:\n%s", rec.message())
		}
	})
}
