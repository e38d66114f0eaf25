// Package child creates the children of the peer-style operators the way a kubebuilder
// controller does, the way Flux's and Cluster API's controllers create the objects they
// own: read the child from the cache, create it if it is missing, refuse one another
// controller owns. Both styles share it so that they differ only in what their peer
// library decides: how status is written and summarized, when a reconcile runs.
package child

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Ensure returns the child named as desired: the one the cache holds, or desired created
// with owner as its controller. created says it was created by this call. A child of that
// name another controller owns is an error: the operator does not take it over.
func Ensure[T client.Object](ctx context.Context, c client.Client, owner client.Object, desired T) (child T, created bool, err error) {
	existing := desired.DeepCopyObject().(T)
	err = c.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	switch {
	case err == nil:
		if !metav1.IsControlledBy(existing, owner) {
			return existing, false, fmt.Errorf("%T %s exists and is not controlled by %s", existing, existing.GetName(), owner.GetName())
		}
		return existing, false, nil
	case !apierrors.IsNotFound(err):
		return existing, false, err
	}
	if err := controllerutil.SetControllerReference(owner, desired, c.Scheme()); err != nil {
		return desired, false, err
	}
	if err := c.Create(ctx, desired); err != nil {
		return desired, false, err
	}
	return desired, true, nil
}

// DeploymentAvailable says a Deployment has rolled out its current generation: every
// replica updated and available, as kstatus and `kubectl rollout status` read it.
func DeploymentAvailable(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.Replicas == want && s.AvailableReplicas == want
}

// DeploymentFailed says a Deployment's rollout exceeded its progress deadline.
func DeploymentFailed(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return true
		}
	}
	return false
}

// Replicas is the Deployment's desired replicas, 1 when unset.
func Replicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas != nil {
		return *d.Spec.Replicas
	}
	return 1
}

// Selector is the Deployment's label selector as the scale subresource reports it.
func Selector(d *appsv1.Deployment) string {
	s, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || d.Spec.Selector == nil {
		return ""
	}
	return s.String()
}
