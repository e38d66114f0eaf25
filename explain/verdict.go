package explain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// Verdict is what one object says of itself: kstatus' verdict, and the state that explains
// it in the words an operator's on-call person looks for.
type Verdict struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`

	// Status is kstatus' verdict: Current, InProgress, Failed, Terminating or Unknown.
	Status string `json:"status"`

	// State is the word that explains Status: a pod's container reason
	// (ImagePullBackOff, CrashLoopBackOff, Error), Unschedulable, Pending, NotReady;
	// Paused, Stalled or Reconciling from the object's own conditions; Progressing for an
	// object in progress that has no Reconciling condition of its own (a Deployment, a
	// ReplicaSet); Terminating for an object being deleted; Current.
	State string `json:"state"`

	// Detail says more: the image a pod cannot pull, an exit code, the reason and message
	// of the condition that explains State, the finalizers that hold an object being
	// deleted (and its Stalled condition: why its cleanup does not end), or kstatus'
	// message.
	Detail string `json:"detail,omitempty"`

	// HoldsBack is whether the object keeps its owner from being done: it is not Current,
	// or it is paused, or it is a pod that failed (kstatus calls a failed pod Current: it
	// will not change, but whatever owns it has not succeeded).
	HoldsBack bool `json:"holdsBack"`

	// Events are the object's most recent Warning events, newest first.
	Events []Event `json:"events,omitempty"`
}

// Event is a Warning event regarding an object.
type Event struct {
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
	Count   int32     `json:"count"`
	Last    time.Time `json:"last"`
}

// String is the verdict as explain prints it in a chain: "Pod web-1: ImagePullBackOff
// (image memcached:nope)".
func (v Verdict) String() string {
	s := fmt.Sprintf("%s %s: %s", v.Kind, v.Name, v.State)
	if v.Detail != "" {
		s += " (" + v.Detail + ")"
	}
	return s
}

// paused is the condition of an object its operator does not reconcile for now, which
// reconcilekit's shell keeps (reconcile.Paused); explain reads it of any object.
const paused = "Paused"

// VerdictOf reads one object as kstatus does, and finds the state that explains its
// verdict: for a pod its containers' reasons, for anything else the conditions kstatus
// reads (Stalled, Reconciling) and Paused. It needs the object's apiVersion and kind.
func VerdictOf(u *unstructured.Unstructured) Verdict {
	v := Verdict{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
	res, err := kstatus.Compute(u)
	if err != nil {
		v.Status, v.State, v.Detail, v.HoldsBack = kstatus.UnknownStatus.String(), "Unknown", err.Error(), true
		return v
	}
	v.Status = res.Status.String()
	v.HoldsBack = res.Status != kstatus.CurrentStatus
	own, _ := kstatus.GetObjectWithConditions(u.Object)
	condition := func(t string) (kstatus.BasicCondition, bool) {
		if own == nil {
			return kstatus.BasicCondition{}, false
		}
		i := slices.IndexFunc(own.Status.Conditions, func(c kstatus.BasicCondition) bool {
			return c.Type == t && c.Status == corev1.ConditionTrue
		})
		if i < 0 {
			return kstatus.BasicCondition{}, false
		}
		return own.Status.Conditions[i], true
	}
	explained := func(c kstatus.BasicCondition) string {
		if c.Message == "" {
			return c.Reason
		}
		return c.Reason + ": " + c.Message
	}

	if c, ok := condition(paused); ok && res.Status != kstatus.TerminatingStatus {
		v.State, v.Detail, v.HoldsBack = paused, explained(c), true
		return v
	}
	if u.GroupVersionKind().GroupKind() == (corev1.SchemeGroupVersion.WithKind("Pod")).GroupKind() && res.Status != kstatus.TerminatingStatus {
		var pod corev1.Pod
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &pod); err == nil {
			v.State, v.Detail = podState(&pod, res)
			v.HoldsBack = v.HoldsBack || pod.Status.Phase == corev1.PodFailed
			return v
		}
	}
	switch res.Status {
	case kstatus.CurrentStatus:
		v.State = "Current"
	case kstatus.TerminatingStatus:
		v.State, v.Detail = "Terminating", res.Message
		if held := u.GetFinalizers(); len(held) > 0 {
			v.Detail = heldBy(held)
			// Its operator's cleanup is what removes a finalizer; its conditions say why it
			// has not yet: Stalled when it cannot end, and what a person can do about it (a
			// reconcilekit shell's CleanupOverdue names the skip-cleanup annotation),
			// Reconciling while it waits or retries (the shell's CleaningUp, Retrying).
			if c, ok := condition("Stalled"); ok {
				v.Detail += "; " + explained(c)
			} else if c, ok := condition("Reconciling"); ok {
				v.Detail += "; " + explained(c)
			}
		}
	case kstatus.FailedStatus:
		v.State = "Stalled"
		if c, ok := condition("Stalled"); ok {
			v.Detail = explained(c)
		} else {
			v.Detail = computed(res, kstatus.ConditionStalled)
		}
	case kstatus.InProgressStatus:
		if c, ok := condition("Reconciling"); ok {
			v.State, v.Detail = "Reconciling", explained(c)
		} else {
			v.State, v.Detail = "Progressing", res.Message
		}
	default:
		v.State, v.Detail = res.Status.String(), res.Message
	}
	return v
}

// heldBy names the finalizers of an object being deleted: until each is removed, by
// whoever put it there, the object stays.
func heldBy(finalizers []string) string {
	if len(finalizers) == 1 {
		return "held by finalizer " + finalizers[0]
	}
	return "held by finalizers " + strings.Join(finalizers, ", ")
}

// computed is kstatus' own account of a verdict it computed for a built-in kind: the
// reason and message of the condition it would have set.
func computed(res *kstatus.Result, t kstatus.ConditionType) string {
	for _, c := range res.Conditions {
		if c.Type == t && c.Message != "" {
			return c.Reason + ": " + c.Message
		}
	}
	return res.Message
}

// imageReasons are the waiting reasons of a container whose image cannot be had: for
// them the image is the detail that matters.
var imageReasons = []string{"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"}

// podState explains a pod as `kubectl get pods` does in its STATUS column, first by its
// containers: a container waiting for a reason, then one that ended badly.
func podState(pod *corev1.Pod, res *kstatus.Result) (state, detail string) {
	statuses := append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...)
	for _, cs := range statuses {
		w := cs.State.Waiting
		if w == nil || w.Reason == "" || w.Reason == "PodInitializing" || w.Reason == "ContainerCreating" {
			continue
		}
		if slices.Contains(imageReasons, w.Reason) {
			return w.Reason, "image " + cs.Image
		}
		return w.Reason, w.Message
	}
	switch pod.Status.Phase {
	case corev1.PodFailed:
		for _, cs := range statuses {
			if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
				detail := fmt.Sprintf("container %s, exit code %d", cs.Name, t.ExitCode)
				if t.Message != "" {
					detail += ": " + t.Message
				}
				return t.Reason, detail
			}
		}
		return "Failed", pod.Status.Message
	case corev1.PodSucceeded:
		return "Current", ""
	case corev1.PodRunning:
		if res.Status == kstatus.CurrentStatus {
			return "Current", ""
		}
		return "NotReady", res.Message
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return "Unschedulable", c.Message
		}
	}
	return "Pending", res.Message
}
