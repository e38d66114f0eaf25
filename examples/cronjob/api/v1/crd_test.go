package v1_test

import (
	"strings"
	"testing"

	kbatch "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	batchv1 "github.com/reconcilekit/reconcilekit/examples/cronjob/api/v1"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// TestCRD checks the generated CustomResourceDefinition against a real API server: the
// defaults of Kubernetes' CronJob, and the refusals with a message that says what is
// wanted.
func TestCRD(t *testing.T) {
	cp := reconciletest.StartAPIServer(t, "../../config/crd/bases")
	scheme := runtime.NewScheme()
	if err := batchv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := cp.Client(t, scheme)
	ns := cp.Namespace(t)
	valid := func() *batchv1.CronJob {
		return &batchv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "cronjob-"},
			Spec: batchv1.CronJobSpec{
				Schedule: "*/5 * * * *",
				JobTemplate: kbatch.JobTemplateSpec{Spec: kbatch.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "run", Image: "busybox:1.36"}},
				}}}},
			},
		}
	}

	t.Run("defaults", func(t *testing.T) {
		cj := valid()
		if err := c.Create(t.Context(), cj); err != nil {
			t.Fatal(err)
		}
		if cj.Spec.ConcurrencyPolicy != batchv1.AllowConcurrent || ptr.Deref(cj.Spec.SuccessfulJobsHistoryLimit, -1) != 3 ||
			ptr.Deref(cj.Spec.FailedJobsHistoryLimit, -1) != 1 {
			t.Errorf("defaults: concurrencyPolicy %q, successfulJobsHistoryLimit %v, failedJobsHistoryLimit %v; want Allow, 3, 1",
				cj.Spec.ConcurrencyPolicy, cj.Spec.SuccessfulJobsHistoryLimit, cj.Spec.FailedJobsHistoryLimit)
		}
	})

	for _, tc := range []struct {
		name    string
		change  func(*batchv1.CronJob)
		refused string
	}{
		{"a time zone in the schedule", func(cj *batchv1.CronJob) { cj.Spec.Schedule = "CRON_TZ=Europe/Berlin 0 9 * * *" },
			"set the time zone in spec.timeZone, not in the schedule"},
		{"an empty schedule", func(cj *batchv1.CronJob) { cj.Spec.Schedule = "" }, "spec.schedule"},
		{"an unknown concurrency policy", func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = "Sometimes" },
			`spec.concurrencyPolicy: Unsupported value: "Sometimes"`},
		{"a negative history limit", func(cj *batchv1.CronJob) { cj.Spec.FailedJobsHistoryLimit = ptr.To[int32](-1) },
			"spec.failedJobsHistoryLimit"},
		{"a negative starting deadline", func(cj *batchv1.CronJob) { cj.Spec.StartingDeadlineSeconds = ptr.To[int64](-1) },
			"spec.startingDeadlineSeconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cj := valid()
			tc.change(cj)
			err := c.Create(t.Context(), cj)
			if err == nil || !strings.Contains(err.Error(), tc.refused) {
				t.Errorf("create: %v; want a refusal that says %q", err, tc.refused)
			}
		})
	}
}
