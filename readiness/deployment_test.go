package readiness

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/workload"
)

// condition returns a Deployment condition as the Deployment controller writes it.
func condition(typ appsv1.DeploymentConditionType, status corev1.ConditionStatus, reason string) appsv1.DeploymentCondition {
	return appsv1.DeploymentCondition{Type: typ, Status: status, Reason: reason}
}

var (
	minimumAvailable   = condition(appsv1.DeploymentAvailable, corev1.ConditionTrue, "MinimumReplicasAvailable")
	minimumUnavailable = condition(appsv1.DeploymentAvailable, corev1.ConditionFalse, "MinimumReplicasUnavailable")
	deadlineExceeded   = condition(appsv1.DeploymentProgressing, corev1.ConditionFalse, "ProgressDeadlineExceeded")
)

func TestDeploymentReadiness(t *testing.T) {
	// rolled is a Deployment of 2 replicas, rolled out and serving, at generation 2.
	rolled := func(d *appsv1.Deployment) {
		d.Generation = 2
		d.Status = appsv1.DeploymentStatus{
			ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{minimumAvailable},
		}
	}
	// resized makes spec.replicas 5, a new generation the controller has not observed yet.
	resized := func(d *appsv1.Deployment) { d.Generation, d.Spec.Replicas = 3, ptr.To[int32](5) }
	// observed is what the controller makes of resized while the new pods start: with the
	// default maxUnavailable (25% of 5, so 1) 4 available pods are minimum availability.
	observed := func(d *appsv1.Deployment) {
		d.Status = appsv1.DeploymentStatus{
			ObservedGeneration: 3, Replicas: 5, UpdatedReplicas: 5, ReadyReplicas: 4, AvailableReplicas: 4,
			Conditions: []appsv1.DeploymentCondition{minimumAvailable},
		}
	}
	withConditions := func(c ...appsv1.DeploymentCondition) func(*appsv1.Deployment) {
		return func(d *appsv1.Deployment) { d.Status.Conditions = c }
	}
	tests := []struct {
		name            string
		d               *appsv1.Deployment
		available       bool
		availableReason string
		rollout         Rollout
		reason          string
		message         string // a substring of Message
	}{
		{"a fresh deployment is not available, because its controller has not said so",
			deployment(func(d *appsv1.Deployment) { d.Generation = 1 }),
			false, ReasonAvailabilityNotReported, RolloutInProgress, "RollingOut", "0 of 2 replicas available"},
		{"a deployment whose pods start is not available yet",
			deployment(func(d *appsv1.Deployment) {
				d.Generation = 1
				d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2,
					Conditions: []appsv1.DeploymentCondition{minimumUnavailable}}
			}),
			false, "MinimumReplicasUnavailable", RolloutInProgress, "RollingOut", "0 of 2 replicas available"},
		{"a rolled out deployment is available and complete",
			deployment(rolled),
			true, "MinimumReplicasAvailable", RolloutComplete, "RolloutComplete", "2 of 2 replicas available"},
		{"a resize the controller has not observed yet keeps serving and is in progress",
			deployment(rolled, resized),
			true, "MinimumReplicasAvailable", RolloutInProgress, "RollingOut", "2 of 5 replicas available"},
		{"resizing up while pods serve is available and in progress",
			deployment(rolled, resized, observed),
			true, "MinimumReplicasAvailable", RolloutInProgress, "RollingOut", "4 of 5 replicas available"},
		{"a resize beyond maxUnavailable still serves, though the deployment reports no minimum availability",
			deployment(rolled, resized, observed, func(d *appsv1.Deployment) {
				d.Status.ReadyReplicas, d.Status.AvailableReplicas = 2, 2
				d.Status.Conditions = []appsv1.DeploymentCondition{minimumUnavailable}
			}),
			true, ReasonServing, RolloutInProgress, "RollingOut", "2 of 5 replicas available"},
		{"a rollout with no replica available does not serve",
			deployment(rolled, resized, observed, func(d *appsv1.Deployment) {
				d.Status.ReadyReplicas, d.Status.AvailableReplicas = 0, 0
				d.Status.Conditions = []appsv1.DeploymentCondition{minimumUnavailable}
			}),
			false, "MinimumReplicasUnavailable", RolloutInProgress, "RollingOut", "0 of 5 replicas available"},
		{"rolling a new image within maxUnavailable is available and in progress",
			deployment(rolled, func(d *appsv1.Deployment) {
				one := intstr.FromInt32(1)
				d.Generation, d.Spec.Replicas = 3, ptr.To[int32](4)
				d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
					RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &one, MaxSurge: &one}}
				d.Status = appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 5, UpdatedReplicas: 2, ReadyReplicas: 4, AvailableReplicas: 3,
					Conditions: []appsv1.DeploymentCondition{minimumAvailable}}
			}),
			true, "MinimumReplicasAvailable", RolloutInProgress, "RollingOut", "3 of 4 replicas available, 3 pending termination"},
		{"an exceeded progress deadline has failed while the old pods serve",
			deployment(rolled, withConditions(minimumAvailable, deadlineExceeded)),
			true, "MinimumReplicasAvailable", RolloutFailed, "ProgressDeadlineExceeded", "no progress"},
		{"an exceeded progress deadline without minimum availability has failed and does not serve",
			deployment(rolled, withConditions(deadlineExceeded, minimumUnavailable)),
			false, "MinimumReplicasUnavailable", RolloutFailed, "ProgressDeadlineExceeded", "no progress"},
		{"an exceeded progress deadline of an older generation has not failed yet",
			deployment(rolled, resized, withConditions(minimumAvailable, deadlineExceeded)),
			true, "MinimumReplicasAvailable", RolloutInProgress, "RollingOut", "2 of 5 replicas available"},
		{"an unknown availability is not available",
			deployment(rolled, withConditions(condition(appsv1.DeploymentAvailable, corev1.ConditionUnknown, "Unknown"))),
			false, "Unknown", RolloutComplete, "RolloutComplete", "2 of 2 replicas available"},
		{"replicas not yet updated are in progress",
			deployment(rolled, func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 1 }),
			true, "MinimumReplicasAvailable", RolloutInProgress, "RollingOut", "2 of 2"},
		{"old replicas left are in progress",
			deployment(rolled, func(d *appsv1.Deployment) { d.Status.Replicas = 3 }),
			true, "MinimumReplicasAvailable", RolloutInProgress, "RollingOut", "1 pending termination"},
		{"replicas not ready are in progress",
			deployment(rolled, func(d *appsv1.Deployment) { d.Status.ReadyReplicas = 1 }),
			true, "MinimumReplicasAvailable", RolloutInProgress, "RollingOut", "2 of 2"},
		{"replicas not available are in progress",
			deployment(rolled, func(d *appsv1.Deployment) { d.Status.AvailableReplicas = 1 }),
			true, "MinimumReplicasAvailable", RolloutInProgress, "RollingOut", "1 of 2"},
		{"a deployment scaled to zero is available and complete",
			deployment(rolled, func(d *appsv1.Deployment) {
				*d.Spec.Replicas = 0
				d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2, Conditions: []appsv1.DeploymentCondition{minimumAvailable}}
			}),
			true, "MinimumReplicasAvailable", RolloutComplete, "RolloutComplete", "0 of 0 replicas available"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Deployment(tt.d)
			if got.Available != tt.available || got.AvailableReason != tt.availableReason || got.AvailableMessage == "" {
				t.Errorf("availability = %v %s %q, want %v %s and a message", got.Available, got.AvailableReason, got.AvailableMessage, tt.available, tt.availableReason)
			}
			if got.Rollout != tt.rollout || got.Reason != tt.reason || !strings.Contains(got.Message, tt.message) {
				t.Errorf("rollout = %s %s %q, want %s %s with a message containing %q", got.Rollout, got.Reason, got.Message, tt.rollout, tt.reason, tt.message)
			}
		})
	}
}

func TestReadinessMark(t *testing.T) {
	const T, F = metav1.ConditionTrue, metav1.ConditionFalse
	type want struct {
		status metav1.ConditionStatus
		reason string
	}
	tests := []struct {
		name string
		r    State
		// Available, Progressing, Degraded
		want [3]want
	}{
		{"a complete rollout that serves is only available",
			State{Available: true, AvailableReason: "MinimumReplicasAvailable", AvailableMessage: "m", Rollout: RolloutComplete, Reason: "RolloutComplete", Message: "m"},
			[3]want{{T, "MinimumReplicasAvailable"}, {F, "RolloutComplete"}, {F, "RolloutComplete"}}},
		{"a resize that serves is available and progressing",
			State{Available: true, AvailableReason: "MinimumReplicasAvailable", AvailableMessage: "m", Rollout: RolloutInProgress, Reason: "RollingOut", Message: "m"},
			[3]want{{T, "MinimumReplicasAvailable"}, {T, "RollingOut"}, {F, "RollingOut"}}},
		{"a fresh deployment is progressing and not available",
			State{AvailableReason: ReasonAvailabilityNotReported, AvailableMessage: "m", Rollout: RolloutInProgress, Reason: "RollingOut", Message: "m"},
			[3]want{{F, ReasonAvailabilityNotReported}, {T, "RollingOut"}, {F, "RollingOut"}}},
		{"a failed rollout that serves is available and degraded",
			State{Available: true, AvailableReason: "MinimumReplicasAvailable", AvailableMessage: "m", Rollout: RolloutFailed, Reason: "ProgressDeadlineExceeded", Message: "m"},
			[3]want{{T, "MinimumReplicasAvailable"}, {F, "ProgressDeadlineExceeded"}, {T, "ProgressDeadlineExceeded"}}},
		{"a failure built by hand gives its reason to all three",
			State{Rollout: RolloutFailed, Reason: "DeploymentNotOwned", Message: "m"},
			[3]want{{F, "DeploymentNotOwned"}, {F, "DeploymentNotOwned"}, {T, "DeploymentNotOwned"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var conds []metav1.Condition
			obj := conditions.List(&conds, 1)
			if !tt.r.Mark(obj) {
				t.Fatal("Mark reported no change on an object without conditions")
			}
			for i, typ := range []string{conditions.Available, conditions.Progressing, conditions.Degraded} {
				c := conditions.Find(obj, typ)
				if c == nil || c.Status != tt.want[i].status || c.Reason != tt.want[i].reason || c.Message != "m" {
					t.Errorf("%s = %+v, want %s with reason %s and message m", typ, c, tt.want[i].status, tt.want[i].reason)
				}
			}
			if tt.r.Mark(obj) {
				t.Error("marking the same readiness again reported a change")
			}
		})
	}
}

// The reason for Available's own meaning: an alert on Available=False must not fire because
// a serving Deployment is resized.
func TestResizingAServingDeploymentKeepsItAvailable(t *testing.T) {
	var conds []metav1.Condition
	obj := conditions.List(&conds, 1)
	serving := deployment(func(d *appsv1.Deployment) {
		d.Generation, *d.Spec.Replicas = 1, 4
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 4, UpdatedReplicas: 4, ReadyReplicas: 4, AvailableReplicas: 4,
			Conditions: []appsv1.DeploymentCondition{minimumAvailable}}
	})
	Deployment(serving).Mark(obj)
	since := conditions.Find(obj, conditions.Available).LastTransitionTime

	resizing := serving.DeepCopy()
	resizing.Generation, *resizing.Spec.Replicas = 2, 5
	resizing.Status.ObservedGeneration, resizing.Status.Replicas, resizing.Status.UpdatedReplicas = 2, 5, 5
	Deployment(resizing).Mark(obj)

	if a := conditions.Find(obj, conditions.Available); a.Status != metav1.ConditionTrue || !a.LastTransitionTime.Equal(&since) {
		t.Errorf("Available = %+v while resizing, want True since %v", a, since)
	}
	if !conditions.IsTrue(obj, conditions.Progressing) || conditions.IsTrue(obj, conditions.Degraded) {
		t.Errorf("conditions while resizing = %+v, want Progressing True and Degraded False", conds)
	}
}

func TestDeploymentReadinessIsTheSameAtEveryStepUntilAReplicaIsAvailable(t *testing.T) {
	steps := []appsv1.DeploymentStatus{
		{}, // not yet observed
		{ObservedGeneration: 1},
		{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2},
		{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2},
	}
	first := Deployment(deployment(func(d *appsv1.Deployment) { d.Generation = 1 }))
	for i, s := range steps {
		got := Deployment(deployment(func(d *appsv1.Deployment) { d.Generation, d.Status = 1, s }))
		if got != first {
			t.Errorf("step %d: %+v, want %+v as at the first: the owner's status would be rewritten", i, got, first)
		}
	}
}

// deployment is a desired Deployment of two replicas, changed by mutate.
func deployment(mutate ...func(*appsv1.Deployment)) *appsv1.Deployment {
	d := workload.Deployment("ns", "web", 2, corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:    "web",
			Image:   "busybox",
			Command: []string{"sleep", "3600"},
			Ports:   []corev1.ContainerPort{{ContainerPort: 1234}},
			Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
			},
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false)},
		}}},
	})
	for _, m := range mutate {
		m(d)
	}
	return d
}

// defaulted is what the API server makes of a desired Deployment.
func defaulted(d *appsv1.Deployment) {
	d.UID, d.ResourceVersion, d.Generation = "uid", "7", 3
	d.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	d.Spec.ProgressDeadlineSeconds = ptr.To[int32](600)
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}
	pod := &d.Spec.Template.Spec
	pod.RestartPolicy = corev1.RestartPolicyAlways
	pod.DNSPolicy = corev1.DNSClusterFirst
	pod.TerminationGracePeriodSeconds = ptr.To[int64](30)
	c := &pod.Containers[0]
	c.ImagePullPolicy = corev1.PullAlways
	c.TerminationMessagePath = "/dev/termination-log"
	c.Ports[0].Protocol = corev1.ProtocolTCP
	d.Status = appsv1.DeploymentStatus{Replicas: 2, ReadyReplicas: 1}
}
