package readiness

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func statefulSet(replicas, ready, current int32, revisions ...string) *appsv1.StatefulSet {
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Generation: 1},
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To(replicas)},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: replicas, ReadyReplicas: ready,
			CurrentReplicas: current, UpdatedReplicas: current, CurrentRevision: "r1", UpdateRevision: "r1"},
	}
	if len(revisions) == 2 {
		s.Status.CurrentRevision, s.Status.UpdateRevision = revisions[0], revisions[1]
	}
	return s
}

func daemonSet(desired, available int32) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Generation: 1},
		Status: appsv1.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: desired, CurrentNumberScheduled: desired,
			UpdatedNumberScheduled: desired, NumberAvailable: available, NumberReady: available},
	}
}

func job(started bool, conds ...batchv1.JobCondition) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "once"}, Status: batchv1.JobStatus{Conditions: conds}}
	if started {
		j.Status.StartTime = &metav1.Time{Time: time.Unix(1700000000, 0)}
	}
	return j
}

func pod(phase corev1.PodPhase, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{Phase: phase}}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func custom(conds ...map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "generation": int64(2)},
		"status":   map[string]any{"observedGeneration": int64(2)},
	}}
	list := make([]any, len(conds))
	for i, c := range conds {
		list[i] = c
	}
	_ = unstructured.SetNestedSlice(u.Object, list, "status", "conditions")
	return u
}

func TestReadinessOfFollowsKstatusForEachKind(t *testing.T) {
	ready := func(p *corev1.Pod) {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	crashLooping := func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
	}
	deleting := func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1700000000, 0)} }
	tests := []struct {
		name      string
		obj       client.Object
		rollout   Rollout
		reason    string
		available bool
	}{
		{"a statefulset with fewer ready replicas than a majority is in progress and does not serve", statefulSet(3, 1, 1), RolloutInProgress, ReasonInProgress, false},
		{"a statefulset on an old revision is in progress and serves", statefulSet(3, 3, 3, "r1", "r2"), RolloutInProgress, ReasonInProgress, true},
		{"a statefulset with every replica ready and current is complete", statefulSet(3, 3, 3), RolloutComplete, ReasonCurrent, true},
		{"a daemonset not yet available on every node is in progress and serves from a majority", daemonSet(4, 3), RolloutInProgress, ReasonInProgress, true},
		{"a daemonset ready on half its nodes is in progress and does not serve", daemonSet(4, 2), RolloutInProgress, ReasonInProgress, false},
		{"a daemonset available on every node is complete", daemonSet(4, 4), RolloutComplete, ReasonCurrent, true},
		{"a job not started is in progress", job(false), RolloutInProgress, ReasonInProgress, false},
		{"a started job is current, by kstatus' rule, before it completes", job(true), RolloutComplete, ReasonCurrent, true},
		{"a completed job is complete", job(true, batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}), RolloutComplete, ReasonCurrent, true},
		{"a failed job failed", job(true, batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}), RolloutFailed, "JobFailed", false},
		{"a pending pod is in progress", pod(corev1.PodPending), RolloutInProgress, ReasonInProgress, false},
		{"a running pod not ready is in progress", pod(corev1.PodRunning), RolloutInProgress, ReasonInProgress, false},
		{"a ready pod is complete", pod(corev1.PodRunning, ready), RolloutComplete, ReasonCurrent, true},
		{"a crash-looping pod failed", pod(corev1.PodRunning, crashLooping), RolloutFailed, "ContainerCrashLooping", false},
		{"a pod being deleted is terminating", pod(corev1.PodRunning, ready, deleting), RolloutInProgress, ReasonTerminating, false},
		{"a pending claim is in progress", &corev1.PersistentVolumeClaim{Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}, RolloutInProgress, ReasonInProgress, false},
		{"a bound claim is complete", &corev1.PersistentVolumeClaim{Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}, RolloutComplete, ReasonCurrent, true},
		{"a cluster IP service is complete", &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1"}}, RolloutComplete, ReasonCurrent, true},
		{"a load balancer without an IP is in progress", &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}}, RolloutInProgress, ReasonInProgress, false},
		{"a custom object with no conditions is current", custom(), RolloutComplete, ReasonCurrent, true},
		{"a custom object Ready=False is in progress", custom(map[string]any{"type": "Ready", "status": "False", "reason": "Waiting"}), RolloutInProgress, ReasonInProgress, false},
		{"a custom object Stalled=True failed with its reason", custom(map[string]any{"type": "Stalled", "status": "True", "reason": "BadSpec"}), RolloutFailed, "BadSpec", false},
		{"a stalled reason no condition can carry becomes Failed", custom(map[string]any{"type": "Stalled", "status": "True", "reason": "bad reason!"}), RolloutFailed, ReasonFailed, false},
		{"a custom object whose generation is not observed is in progress",
			func() client.Object { u := custom(); u.SetGeneration(3); return u }(), RolloutInProgress, ReasonInProgress, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Of(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if got.Rollout != tt.rollout || got.Reason != tt.reason || got.Available != tt.available || got.Message == "" {
				t.Errorf("Of = %+v, want rollout %s, reason %s, available %v and a message", got, tt.rollout, tt.reason, tt.available)
			}
		})
	}
}

// kstatusOf is kstatus' verdict on d, the oracle Deployment is held to.
func kstatusOf(t testing.TB, d *appsv1.Deployment) status.Status {
	t.Helper()
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	res, err := status.Compute(u)
	if err != nil {
		t.Fatal(err)
	}
	return res.Status
}

// Deployment is written by hand for speed; kstatus is its oracle. Each status is one
// the Deployment controller writes, from creation through a resize, a new image and a
// failed rollout.
func TestDeploymentReadinessAgreesWithKstatus(t *testing.T) {
	progressing := func(reason string) appsv1.DeploymentCondition {
		return condition(appsv1.DeploymentProgressing, corev1.ConditionTrue, reason)
	}
	at := func(generation, observed int64, replicas, updated, ready, available int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
		return deployment(defaulted, func(d *appsv1.Deployment) {
			d.Generation = generation
			d.Status = appsv1.DeploymentStatus{ObservedGeneration: observed, Replicas: replicas, UpdatedReplicas: updated,
				ReadyReplicas: ready, AvailableReplicas: available, Conditions: conds}
		})
	}
	tests := []struct {
		name string
		d    *appsv1.Deployment
	}{
		{"just created, not observed", at(1, 0, 0, 0, 0, 0)},
		{"observed, pods created", at(1, 1, 2, 2, 0, 0, minimumUnavailable, progressing("NewReplicaSetCreated"))},
		{"one pod ready", at(1, 1, 2, 2, 1, 1, minimumAvailable, progressing("ReplicaSetUpdated"))},
		{"rolled out", at(1, 1, 2, 2, 2, 2, minimumAvailable, progressing("NewReplicaSetAvailable"))},
		{"a new image, not observed", at(2, 1, 2, 2, 2, 2, minimumAvailable, progressing("NewReplicaSetAvailable"))},
		{"a new image, one pod updated", at(2, 2, 3, 1, 2, 2, minimumAvailable, progressing("ReplicaSetUpdated"))},
		{"a new image, every pod updated, one old left", at(2, 2, 3, 2, 2, 2, minimumAvailable, progressing("ReplicaSetUpdated"))},
		{"a new image rolled out", at(2, 2, 2, 2, 2, 2, minimumAvailable, progressing("NewReplicaSetAvailable"))},
		{"a new image past its deadline", at(2, 2, 3, 1, 2, 2, minimumAvailable, deadlineExceeded)},
		{"a deadline exceeded, not yet observed again", at(3, 2, 3, 1, 2, 2, minimumAvailable, deadlineExceeded)},
		{"resized down, old pods terminating", at(3, 3, 3, 3, 2, 2, minimumAvailable, progressing("NewReplicaSetAvailable"))},
	}
	kstatusRollout := map[status.Status]Rollout{
		status.CurrentStatus: RolloutComplete, status.InProgressStatus: RolloutInProgress, status.FailedStatus: RolloutFailed,
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := kstatusRollout[kstatusOf(t, tt.d)]
			if got := Deployment(tt.d).Rollout; got != want {
				t.Errorf("Deployment rollout = %s, kstatus says %s", got, want)
			}
			viaKstatus, err := Of(tt.d)
			if err != nil || viaKstatus.Rollout != want {
				t.Errorf("Of = %s, %v; want %s", viaKstatus.Rollout, err, want)
			}
		})
	}
}

// The hand-written path runs on every reconcile of every owner of a Deployment; this says
// what kstatus would cost there instead.
func BenchmarkDeploymentReadiness(b *testing.B) {
	d := deployment(defaulted, func(d *appsv1.Deployment) {
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{minimumAvailable, condition(appsv1.DeploymentProgressing, corev1.ConditionTrue, "NewReplicaSetAvailable")}}
	})
	b.Run("hand-written", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if Deployment(d).Rollout != RolloutComplete {
				b.Fatal("not complete")
			}
		}
	})
	b.Run("kstatus", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if r, err := Of(d); err != nil || r.Rollout != RolloutComplete {
				b.Fatal(r, err)
			}
		}
	})
}
