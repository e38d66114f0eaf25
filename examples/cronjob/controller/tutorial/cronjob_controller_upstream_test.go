package tutorial_test

// The kubebuilder book's own test of its CronJob controller
// (docs/book/src/cronjob-tutorial/testdata/project/internal/controller/cronjob_controller_test.go
// in kubernetes-sigs/kubebuilder), ported from Ginkgo and Gomega to the standard library
// and run against this operator, step for step. What differs, and why:
//   - the namespace is the test's own (the tutorial makes "test-cronjob"), and it enforces
//     the restricted Pod Security level, as the operator's other tests do; as in the
//     tutorial, no Job controller runs (an API server alone), and the Jobs keep the status
//     the test gives them;
//   - the operator runs with the role its RBAC markers generate, not as an administrator;
//   - the operator caches only the Jobs labelled as its own, not every Job of the cluster
//     (the tutorial's index of Jobs by owner is over all of them), and lists a CronJob's
//     Jobs by its name's label: the test's Jobs carry the two labels, beside the owner
//     reference the tutorial gives them;
//   - Eventually and Consistently keep the tutorial's timings (2 minutes, every second;
//     10 seconds, every 250 ms).

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	kbatch "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	batchv1 "github.com/reconcilekit/reconcilekit/examples/cronjob/api/v1"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func TestTutorialCronJobController(t *testing.T) {
	e := operator.Env(t)
	e.Run(t)
	k8sClient, ctx := e.Client, t.Context()
	const (
		CronjobName        = "test-cronjob"
		testContainerName  = "test-container"
		testContainerImage = "test-image"
	)
	typeNamespacedName := types.NamespacedName{Name: CronjobName, Namespace: e.Namespace}

	// BeforeEach: creating the custom resource for the Kind CronJob.
	cronJob := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: CronjobName, Namespace: e.Namespace},
		Spec: batchv1.CronJobSpec{
			Schedule: "1 * * * *",
			JobTemplate: kbatch.JobTemplateSpec{
				Spec: kbatch.JobSpec{
					Template: corev1.PodTemplateSpec{
						Spec: corev1.PodSpec{
							Containers:    []corev1.Container{{Name: testContainerName, Image: testContainerImage}},
							RestartPolicy: corev1.RestartPolicyOnFailure,
						},
					},
				},
			},
		},
	}
	if err := k8sClient.Create(ctx, cronJob); err != nil {
		t.Fatal(err)
	}

	// Checking if the custom resource was successfully created.
	eventually(t, func(ctx context.Context) error {
		return k8sClient.Get(ctx, typeNamespacedName, &batchv1.CronJob{})
	})

	// Checking that status conditions are initialized.
	eventually(t, func(ctx context.Context) error {
		if err := k8sClient.Get(ctx, typeNamespacedName, cronJob); err != nil {
			return err
		}
		if len(cronJob.Status.Conditions) == 0 {
			return fmt.Errorf("no conditions yet")
		}
		return nil
	})

	// Checking that the CronJob has zero active Jobs, for 10 seconds.
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if err := k8sClient.Get(ctx, typeNamespacedName, cronJob); err != nil {
			t.Fatal(err)
		}
		if len(cronJob.Status.Active) != 0 {
			t.Fatalf("active jobs %v, want none", cronJob.Status.Active)
		}
	}

	// Creating a new Job owned by the CronJob.
	testJob := &kbatch.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "test-job", Namespace: e.Namespace},
		Spec: kbatch.JobSpec{
			Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{
					Containers:    []corev1.Container{{Name: testContainerName, Image: testContainerImage}},
					RestartPolicy: corev1.RestartPolicyOnFailure,
				},
			},
		},
	}
	kind := reflect.TypeFor[batchv1.CronJob]().Name()
	gvk := batchv1.GroupVersion.WithKind(kind)
	controllerRef := metav1.NewControllerRef(cronJob, gvk)
	testJob.SetOwnerReferences([]metav1.OwnerReference{*controllerRef})
	// The operator lists its Jobs by its labels; the tutorial's, by an index of owners.
	testJob.Labels = map[string]string{"app.kubernetes.io/instance": CronjobName, "app.kubernetes.io/managed-by": "cronjob-operator"}
	if err := k8sClient.Create(ctx, testJob); err != nil {
		t.Fatal(err)
	}
	testJob.Status.Active = 2
	if err := k8sClient.Status().Update(ctx, testJob); err != nil {
		t.Fatal(err)
	}

	// Checking that the CronJob has one active Job in status.
	eventually(t, func(ctx context.Context) error {
		if err := k8sClient.Get(ctx, typeNamespacedName, cronJob); err != nil {
			return err
		}
		if len(cronJob.Status.Active) != 1 || cronJob.Status.Active[0].Name != "test-job" {
			return fmt.Errorf("active jobs %v, want test-job alone", cronJob.Status.Active)
		}
		return nil
	})

	// Checking the latest Status Condition added to the CronJob instance.
	if err := k8sClient.Get(ctx, typeNamespacedName, cronJob); err != nil {
		t.Fatal(err)
	}
	var available []metav1.Condition
	for _, c := range cronJob.Status.Conditions {
		if c.Type == "Available" {
			available = append(available, c)
		}
	}
	if len(available) != 1 || available[0].Status != metav1.ConditionTrue || available[0].Reason != "JobsActive" {
		t.Fatalf("Available conditions %+v, want one, True, reason JobsActive", available)
	}

	// Checking that old finished Jobs are pruned by history limits.
	failedJobsHistoryLimit := int32(1)
	successfulJobsHistoryLimit := int32(1)
	eventually(t, func(ctx context.Context) error {
		if err := k8sClient.Get(ctx, typeNamespacedName, cronJob); err != nil {
			return err
		}
		cronJob.Spec.FailedJobsHistoryLimit = &failedJobsHistoryLimit
		cronJob.Spec.SuccessfulJobsHistoryLimit = &successfulJobsHistoryLimit
		return k8sClient.Update(ctx, cronJob)
	})

	createFinishedJob := func(name string, conditionType kbatch.JobConditionType, startTime *metav1.Time) *kbatch.Job {
		finishedJob := &kbatch.Job{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.Namespace, Labels: testJob.Labels},
			Spec: kbatch.JobSpec{
				Template: corev1.PodTemplateSpec{
					Spec: corev1.PodSpec{
						Containers:    []corev1.Container{{Name: testContainerName, Image: testContainerImage}},
						RestartPolicy: corev1.RestartPolicyOnFailure,
					},
				},
			},
		}
		finishedJob.SetOwnerReferences([]metav1.OwnerReference{*controllerRef})
		if err := k8sClient.Create(ctx, finishedJob); err != nil {
			t.Fatal(err)
		}
		finishedJob.Status.StartTime = startTime
		finishedJob.Status.Conditions = []kbatch.JobCondition{{Type: conditionType, Status: corev1.ConditionTrue}}
		if conditionType == kbatch.JobFailed {
			finishedJob.Status.Conditions = append([]kbatch.JobCondition{{Type: kbatch.JobFailureTarget, Status: corev1.ConditionTrue}}, finishedJob.Status.Conditions...)
		}
		if conditionType == kbatch.JobComplete {
			finishedJob.Status.CompletionTime = startTime
			finishedJob.Status.Conditions = append([]kbatch.JobCondition{{Type: kbatch.JobSuccessCriteriaMet, Status: corev1.ConditionTrue}}, finishedJob.Status.Conditions...)
		}
		if err := k8sClient.Status().Update(ctx, finishedJob); err != nil {
			t.Fatal(err)
		}
		return finishedJob
	}

	baseTime := time.Now()
	failedOldStartTime := metav1.NewTime(baseTime.Add(-time.Minute))
	failedNewStartTime := metav1.NewTime(baseTime.Add(time.Second))
	successfulOldStartTime := metav1.NewTime(baseTime.Add(-time.Minute))
	successfulNewStartTime := metav1.NewTime(baseTime.Add(time.Second))

	failedOldJob := createFinishedJob("test-failed-job-old", kbatch.JobFailed, &failedOldStartTime)
	failedNewJob := createFinishedJob("test-failed-job-new", kbatch.JobFailed, &failedNewStartTime)
	successfulOldJob := createFinishedJob("test-successful-job-old", kbatch.JobComplete, &successfulOldStartTime)
	successfulNewJob := createFinishedJob("test-successful-job-new", kbatch.JobComplete, &successfulNewStartTime)

	deleted := func(ctx context.Context, job *kbatch.Job) error {
		err := k8sClient.Get(ctx, types.NamespacedName{Name: job.Name, Namespace: job.Namespace}, &kbatch.Job{})
		if !errors.IsNotFound(err) {
			return fmt.Errorf("job %s: %v, want it deleted", job.Name, err)
		}
		return nil
	}
	exists := func(ctx context.Context, job *kbatch.Job) error {
		return k8sClient.Get(ctx, types.NamespacedName{Name: job.Name, Namespace: job.Namespace}, &kbatch.Job{})
	}
	eventually(t, func(ctx context.Context) error {
		for _, err := range []error{deleted(ctx, failedOldJob), deleted(ctx, successfulOldJob), exists(ctx, failedNewJob), exists(ctx, successfulNewJob)} {
			if err != nil {
				return err
			}
		}
		return nil
	})

	// AfterEach: removing the custom resource for the Kind CronJob.
	if err := k8sClient.Delete(ctx, cronJob); err != nil {
		t.Fatal(err)
	}
}

// eventually is Gomega's Eventually with the tutorial's timings, 2 minutes every second.
func eventually(t *testing.T, cond func(ctx context.Context) error) {
	t.Helper()
	reconciletest.Eventually(t, cond)
}
