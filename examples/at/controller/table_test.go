package controller_test

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/examples/at/controller"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/workload"
)

// ats is the At controller's phase machine in the shell, as Setup builds it, one
// reconcile at a time on an API server alone: no manager, no kubelet, no pods but those a
// case gives, and the time the case's clock says (reconcile.Now).
var ats = reconciletest.ReconcilerTests{
	CRDDirectories: []string{filepath.Join("..", "config", "crd", "bases")},
	AddToScheme:    cnatv1alpha1.AddToScheme,
	// As the operator's tests do: a pod that could run as root is refused.
	Restricted: true,
	Controller: controller.New(),
}

func TestAtTable(t *testing.T) {
	now := reconciletest.DefaultNow
	table := ats
	table.Cases = []reconciletest.ReconcilerTestCase{{
		Name:         "an At waits for its schedule, and looks at its clock again within a minute, in case it is stepped",
		Object:       at(now.Add(time.Hour), "echo later"),
		WantRequests: []string{"patch ats/status"},
		WantStatus: cnatv1alpha1.AtStatus{Phase: cnatv1alpha1.PhasePending, ObservedGeneration: 1, Conditions: []metav1.Condition{
			condition("Ready", "False", "Pending", "phase PENDING"),
			condition("Reconciling", "True", "Pending", "phase PENDING"),
		}},
		WantResult: rtreconcile.Result{RequeueAfter: time.Minute},
	}, {
		// Up to two seconds early, as the original cnat operator.
		Name:         "a due At creates the pod that runs its command, and is RUNNING",
		Object:       at(now.Add(time.Second), "echo done"),
		WantRequests: []string{"create pods", "patch ats/status"},
		WantObjects:  []client.Object{writtenOutPod("echo done")},
		WantStatus: cnatv1alpha1.AtStatus{Phase: cnatv1alpha1.PhaseRunning, PodName: "report", ObservedGeneration: 1, Conditions: []metav1.Condition{
			condition("Ready", "False", "Running", "phase RUNNING"),
			condition("Reconciling", "True", "Running", "phase RUNNING"),
		}},
	}, {
		Name:             "a RUNNING At whose pod runs creates no second pod and writes nothing",
		Object:           at(now.Add(-time.Hour), "echo done"),
		ReconciledBefore: 1,
		WantObjects:      []client.Object{commandPod("echo done", nil)},
	}, {
		Name:         "a schedule missed by more than a day is not run, and the At says why",
		Object:       at(now.Add(-48*time.Hour), "echo done"),
		WantRequests: []string{"patch ats/status"},
		WantStatus:   stalledAt(cnatv1alpha1.PhasePending, "", "ScheduleMissed", scheduleMissed),
		WantEvents:   []string{"Warning ScheduleMissed " + scheduleMissed},
	}, {
		Name:         "a pod of its name that the At does not own is left alone, and the At says why",
		Object:       at(now.Add(-time.Hour), "echo done"),
		Given:        []client.Object{someoneElsesPod()},
		WantRequests: []string{"patch ats/status"},
		WantObjects:  []client.Object{someoneElsesPod()},
		WantStatus:   stalledAt(cnatv1alpha1.PhaseRunning, "", "PodNameTaken", podNameTaken),
		WantEvents:   []string{"Warning PodNameTaken " + podNameTaken},
		WantResult:   rtreconcile.Result{RequeueAfter: time.Minute},
	}, {
		Name:   "a command that succeeded makes the At DONE and Ready, with its exit code",
		Object: running(at(now.Add(-time.Hour), "echo done")),
		Given: []client.Object{commandPod("echo done", &corev1.PodStatus{Phase: corev1.PodSucceeded,
			ContainerStatuses: terminated(0, "")})},
		WantRequests: []string{"patch ats/status"},
		WantObjects:  []client.Object{commandPod("echo done", nil)},
		WantStatus: cnatv1alpha1.AtStatus{Phase: cnatv1alpha1.PhaseDone, PodName: "report", ExitCode: ptr.To[int32](0),
			ObservedGeneration: 1, Conditions: []metav1.Condition{
				condition("Succeeded", "True", "CommandSucceeded", "the command succeeded"),
				condition("Ready", "True", "Reconciled", ""),
			}},
	}, {
		Name:   "a command that failed makes the At DONE and Stalled, with its message and exit code",
		Object: running(at(now.Add(-time.Hour), "exit 3")),
		Given: []client.Object{commandPod("exit 3", &corev1.PodStatus{Phase: corev1.PodFailed,
			ContainerStatuses: terminated(3, "no such file")})},
		WantRequests: []string{"patch ats/status"},
		WantObjects:  []client.Object{commandPod("exit 3", nil)},
		WantStatus:   stalledAt(cnatv1alpha1.PhaseDone, "report", "CommandFailed", "no such file", 3),
		WantEvents:   []string{"Warning CommandFailed no such file"},
	}, {
		Name:         "a pod deleted before its command ended is reported, never replaced",
		Object:       running(at(now.Add(-time.Hour), "echo done")),
		WantRequests: []string{"patch ats/status"},
		WantStatus:   stalledAt(cnatv1alpha1.PhaseDone, "report", "PodLost", podLost),
		WantEvents:   []string{"Warning PodLost " + podLost},
	}, {
		Name:   "a pod the API server refuses is retried, and the At says so at once",
		Object: at(now.Add(-time.Hour), "echo done"),
		Faults: &reconciletest.Faults{Verbs: []string{"create"}, Resources: []string{"pods"}, Rate: 1,
			Code: http.StatusForbidden}, // a quota, an admission policy: a person must act
		WantRequests: []string{"create pods", "patch ats/status"},
		WantStatus: cnatv1alpha1.AtStatus{Phase: cnatv1alpha1.PhaseRunning, Conditions: []metav1.Condition{
			condition("Succeeded", "Unknown", "PodNotCreated", "creating pod report: fault injected by reconciletest: create pods"),
			// The phase machine reports the phase it is in; Succeeded says what went wrong.
			condition("Ready", "False", "Running", "phase RUNNING"),
			condition("Reconciling", "True", "Running", "phase RUNNING"),
		}},
		WantEvents: []string{"Warning ReconcileError fault injected by reconciletest: create pods"},
		WantErr:    "fault injected",
	}}
	table.Run(t)
}

// What the At says when it cannot go on.
const (
	scheduleMissed = "the schedule 2029-12-30T12:00:00Z passed 48h0m0s ago, more than the 24h0m0s an At may start late; set a new schedule to run the command"
	podNameTaken   = "Pod " + reconciletest.CaseNamespace + "/report exists and has no controller; it is left alone: delete it or rename this At"
	podLost        = "pod report was deleted before the command ended; it is not run again"
)

// at is the At the cases reconcile, named report.
func at(schedule time.Time, command string) *cnatv1alpha1.At {
	return &cnatv1alpha1.At{
		ObjectMeta: metav1.ObjectMeta{Name: "report"},
		Spec:       cnatv1alpha1.AtSpec{Schedule: schedule.UTC().Format(time.RFC3339), Command: command},
	}
}

// running is the At as a reconcile that created its pod left it.
func running(a *cnatv1alpha1.At) *cnatv1alpha1.At {
	a.Status = cnatv1alpha1.AtStatus{Phase: cnatv1alpha1.PhaseRunning, PodName: a.Name}
	return a
}

// condition is a condition of generation 1 that changed at the case's time.
func condition(typ, status, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), ObservedGeneration: 1,
		LastTransitionTime: metav1.NewTime(reconciletest.DefaultNow), Reason: reason, Message: message}
}

// stalledAt is the status of an At that cannot go on, in phase with pod: Succeeded False,
// Ready False and Stalled, all for reason, and the exit code if there is one.
func stalledAt(phase, pod, reason, message string, exitCode ...int32) cnatv1alpha1.AtStatus {
	s := cnatv1alpha1.AtStatus{Phase: phase, PodName: pod, ObservedGeneration: 1, Conditions: []metav1.Condition{
		condition("Succeeded", "False", reason, message),
		condition("Ready", "False", reason, message),
		condition("Stalled", "True", reason, message),
	}}
	for _, c := range exitCode {
		s.ExitCode = ptr.To(c)
	}
	return s
}

// commandPod is the pod of the At report running command, controlled by it, with status
// if not nil.
func commandPod(command string, status *corev1.PodStatus) *corev1.Pod {
	pod := controller.CommandPod(at(reconciletest.DefaultNow, command))
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: cnatv1alpha1.GroupVersion.String(), Kind: "At", Name: "report",
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	if status != nil {
		pod.Status = *status
	}
	return pod
}

// terminated is the status of the command's container once it has ended.
func terminated(exitCode int32, message string) []corev1.ContainerStatus {
	return []corev1.ContainerStatus{{Name: "command", Image: controller.Image, ImageID: controller.Image,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exitCode, Message: message,
			StartedAt: metav1.NewTime(reconciletest.DefaultNow), FinishedAt: metav1.NewTime(reconciletest.DefaultNow)}}}}
}

// writtenOutPod is the pod of the At report running command, written out rather than
// built by controller.CommandPod: the command once, never restarted, restricted, controlled
// by the At.
func writtenOutPod(command string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "report",
			Labels: map[string]string{
				"app.kubernetes.io/name":       "at",
				"app.kubernetes.io/instance":   "report",
				"app.kubernetes.io/managed-by": "at-operator",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: cnatv1alpha1.GroupVersion.String(), Kind: "At", Name: "report",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1001),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{
				Name:                     "command",
				Image:                    "busybox:1.36",
				Command:                  []string{"sh", "-c", command},
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			}},
		},
	}
}

// someoneElsesPod is a pod named report that is not the At's.
func someoneElsesPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "report"},
		Spec:       workload.Restricted(corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "someone/app:1"}}}, 1000),
	}
}
