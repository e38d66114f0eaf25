package ownership

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
)

// Deployment returns the desired Deployment for an owner: name and namespace from the
// arguments, the given replicas, and pods from template whose labels double as the selector.
// Pass it to Ensure.
func Deployment(namespace, name string, replicas int32, template corev1.PodTemplateSpec) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: template.Labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: template.Labels},
			Template: template,
		},
	}
}

// Pods lists the pods a Deployment selects, from c's cache when c is the manager's client.
// An operator that uses it should restrict its pod cache to its own pods (a label selector in
// the manager's cache options) rather than cache every pod of the cluster.
func Pods(ctx context.Context, c client.Reader, d *appsv1.Deployment) ([]corev1.Pod, error) {
	if d.Spec.Selector == nil {
		return nil, nil
	}
	selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(d.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, err
	}
	return pods.Items, nil
}

// Rollout is how far a Deployment has rolled out.
type Rollout string

// The rollout states, after kstatus: Complete is kstatus' Current.
const (
	RolloutComplete   Rollout = "Complete"
	RolloutInProgress Rollout = "InProgress"
	RolloutFailed     Rollout = "Failed"
)

// Readiness is a Deployment's rollout state with a reason and message a person can act on.
type Readiness struct {
	// Rollout is how far the rollout has come.
	Rollout Rollout
	// Reason is CamelCase, usable as a condition reason.
	Reason string
	// Message says the same for a person, with the replica counts.
	Message string
}

// DeploymentReadiness computes a Deployment's readiness with kstatus' rules: the controller
// must have observed the current generation; a Progressing condition with reason
// ProgressDeadlineExceeded means the rollout failed; otherwise it is complete once every
// desired replica is updated, ready and available and no old replica is left.
//
// Every rollout in progress has the reason RollingOut and a message that counts available
// replicas (and old ones left), so that the owner's status changes as often as the count
// does, not at each step of each replica: a status written from it is rewritten only when
// there is progress to report.
func DeploymentReadiness(d *appsv1.Deployment) Readiness {
	want := ptr.Deref(d.Spec.Replicas, 1)
	s := d.Status
	observed := d.Generation <= s.ObservedGeneration
	if observed {
		for _, c := range s.Conditions {
			if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
				msg := c.Message
				if msg == "" {
					msg = "the rollout made no progress within spec.progressDeadlineSeconds"
				}
				return Readiness{Rollout: RolloutFailed, Reason: "ProgressDeadlineExceeded", Message: msg}
			}
		}
	}
	msg := fmt.Sprintf("%d of %d replicas available", s.AvailableReplicas, want)
	if old := s.Replicas - s.UpdatedReplicas; old > 0 {
		msg += fmt.Sprintf(", %d old pending termination", old)
	}
	complete := observed && s.UpdatedReplicas >= want && s.Replicas <= s.UpdatedReplicas &&
		s.ReadyReplicas >= want && s.AvailableReplicas >= want
	if !complete {
		return Readiness{Rollout: RolloutInProgress, Reason: "RollingOut", Message: msg}
	}
	return Readiness{Rollout: RolloutComplete, Reason: "RolloutComplete", Message: msg}
}

// Mark records r in obj's Available, Progressing and Degraded conditions: Available while the
// rollout is complete, Progressing while it is in progress, Degraded once it has failed, each
// with r's reason and message. It reports whether any condition changed.
func (r Readiness) Mark(obj conditions.Setter) bool {
	set := func(typ string, on bool) bool {
		if on {
			return conditions.MarkTrue(obj, typ, r.Reason, "%s", r.Message)
		}
		return conditions.MarkFalse(obj, typ, r.Reason, "%s", r.Message)
	}
	a := set(conditions.Available, r.Rollout == RolloutComplete)
	p := set(conditions.Progressing, r.Rollout == RolloutInProgress)
	d := set(conditions.Degraded, r.Rollout == RolloutFailed)
	return a || p || d
}
