package explain_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/reconcilekit/reconcilekit/explain"
)

func TestVerdictOf(t *testing.T) {
	for _, tc := range []struct {
		name   string
		object string
		want   explain.Verdict // of the verdict, Status, State, Detail and HoldsBack
	}{{
		name: "a pod that cannot pull its image names the image",
		object: `{apiVersion: v1, kind: Pod, metadata: {name: web-1}, status: {phase: Pending, containerStatuses: [
			{name: memcached, image: "memcached:nope", state: {waiting: {reason: ImagePullBackOff, message: "Back-off pulling image"}}}]}}`,
		want: explain.Verdict{Status: "InProgress", State: "ImagePullBackOff", Detail: "image memcached:nope", HoldsBack: true},
	}, {
		name: "a pod of an init container that cannot pull its image names that image",
		object: `{apiVersion: v1, kind: Pod, metadata: {name: web-1}, status: {phase: Pending,
			initContainerStatuses: [{name: setup, image: "busybox:nope", state: {waiting: {reason: ErrImagePull}}}],
			containerStatuses: [{name: memcached, image: "memcached:1", state: {waiting: {reason: PodInitializing}}}]}}`,
		want: explain.Verdict{Status: "InProgress", State: "ErrImagePull", Detail: "image busybox:nope", HoldsBack: true},
	}, {
		name: "a crash-looping pod says so, with the kubelet's message",
		object: `{apiVersion: v1, kind: Pod, metadata: {name: web-1}, status: {phase: Running, containerStatuses: [
			{name: memcached, image: "memcached:1", state: {waiting: {reason: CrashLoopBackOff, message: "back-off 5m0s restarting failed container"}}}]}}`,
		want: explain.Verdict{Status: "Failed", State: "CrashLoopBackOff", Detail: "back-off 5m0s restarting failed container", HoldsBack: true},
	}, {
		name: "a failed pod holds back though kstatus calls it Current, with its exit code and message",
		object: `{apiVersion: v1, kind: Pod, metadata: {name: report}, status: {phase: Failed, containerStatuses: [
			{name: command, image: "busybox:1", state: {terminated: {reason: Error, exitCode: 2, message: "no such file"}}}]}}`,
		want: explain.Verdict{Status: "Current", State: "Error", Detail: "container command, exit code 2: no such file", HoldsBack: true},
	}, {
		name:   "an evicted pod says what the kubelet said",
		object: `{apiVersion: v1, kind: Pod, metadata: {name: web-1}, status: {phase: Failed, reason: Evicted, message: "low on memory"}}`,
		want:   explain.Verdict{Status: "Current", State: "Failed", Detail: "low on memory", HoldsBack: true},
	}, {
		name: "an unschedulable pod (for longer than kstatus waits) says why the scheduler placed it nowhere",
		object: `{apiVersion: v1, kind: Pod, metadata: {name: web-1}, status: {phase: Pending, conditions: [
			{type: PodScheduled, status: "False", reason: Unschedulable, message: "0/2 nodes are available"}]}}`,
		want: explain.Verdict{Status: "Failed", State: "Unschedulable", Detail: "0/2 nodes are available", HoldsBack: true},
	}, {
		name:   "a running pod that is not ready says so",
		object: `{apiVersion: v1, kind: Pod, metadata: {name: web-1}, status: {phase: Running, conditions: [{type: Ready, status: "False"}]}}`,
		want:   explain.Verdict{Status: "InProgress", State: "NotReady", Detail: "Pod is running but is not Ready", HoldsBack: true},
	}, {
		name:   "a ready pod is Current",
		object: `{apiVersion: v1, kind: Pod, metadata: {name: web-1}, status: {phase: Running, conditions: [{type: Ready, status: "True"}]}}`,
		want:   explain.Verdict{Status: "Current", State: "Current"},
	}, {
		name:   "a pod that completed is Current",
		object: `{apiVersion: v1, kind: Pod, metadata: {name: report}, status: {phase: Succeeded}}`,
		want:   explain.Verdict{Status: "Current", State: "Current"},
	}, {
		name: "an object Stalled by its operator gives the condition's reason and message",
		object: `{apiVersion: cache.example.com/v1alpha1, kind: Memcached, metadata: {name: web, generation: 1}, status: {observedGeneration: 1, conditions: [
			{type: Ready, status: "False", reason: DeploymentNotOwned, message: "taken"},
			{type: Stalled, status: "True", reason: DeploymentNotOwned, message: "taken"}]}}`,
		want: explain.Verdict{Status: "Failed", State: "Stalled", Detail: "DeploymentNotOwned: taken", HoldsBack: true},
	}, {
		name: "an object its operator is Reconciling gives the condition's reason and message",
		object: `{apiVersion: cache.example.com/v1alpha1, kind: Memcached, metadata: {name: web, generation: 1}, status: {observedGeneration: 1, conditions: [
			{type: Reconciling, status: "True", reason: RollingOut, message: "0 of 1 replicas available"}]}}`,
		want: explain.Verdict{Status: "InProgress", State: "Reconciling", Detail: "RollingOut: 0 of 1 replicas available", HoldsBack: true},
	}, {
		name: "a paused object holds back though it is Current",
		object: `{apiVersion: cache.example.com/v1alpha1, kind: Memcached, metadata: {name: web, generation: 1}, status: {observedGeneration: 1, conditions: [
			{type: Ready, status: "True", reason: Available},
			{type: Paused, status: "True", reason: PausedByAnnotation, message: "remove it to resume"}]}}`,
		want: explain.Verdict{Status: "Current", State: "Paused", Detail: "PausedByAnnotation: remove it to resume", HoldsBack: true},
	}, {
		name:   "an object whose new generation its operator has not seen is Progressing",
		object: `{apiVersion: cache.example.com/v1alpha1, kind: Memcached, metadata: {name: web, generation: 2}, status: {observedGeneration: 1}}`,
		want:   explain.Verdict{Status: "InProgress", State: "Progressing", Detail: "Memcached generation is 2, but latest observed generation is 1", HoldsBack: true},
	}, {
		name: "a Deployment rolling out is Progressing, in kstatus' words",
		object: `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, generation: 1}, spec: {replicas: 2},
			status: {observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 1, availableReplicas: 1}}`,
		want: explain.Verdict{Status: "InProgress", State: "Progressing", Detail: "Available: 1/2", HoldsBack: true},
	}, {
		name: "a Deployment past its progress deadline is Stalled, with the Deployment controller's reason",
		object: `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, generation: 1}, spec: {replicas: 1}, status: {observedGeneration: 1, conditions: [
			{type: Progressing, status: "False", reason: ProgressDeadlineExceeded, message: "ReplicaSet \"web-1\" has timed out progressing."}]}}`,
		want: explain.Verdict{Status: "Failed", State: "Stalled", Detail: `ProgressDeadlineExceeded: ReplicaSet "web-1" has timed out progressing.`, HoldsBack: true},
	}, {
		name:   "an object being deleted is Terminating, paused or not",
		object: `{apiVersion: cache.example.com/v1alpha1, kind: Memcached, metadata: {name: web, deletionTimestamp: "2026-01-01T00:00:00Z"}, status: {conditions: [{type: Paused, status: "True", reason: PausedByAnnotation}]}}`,
		want:   explain.Verdict{Status: "Terminating", State: "Terminating", Detail: "Resource scheduled for deletion", HoldsBack: true},
	}, {
		name:   "an object being deleted names the finalizers that hold it",
		object: `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data-0, deletionTimestamp: "2026-01-01T00:00:00Z", finalizers: [kubernetes.io/pvc-protection, backup.example.com/snapshot]}}`,
		want:   explain.Verdict{Status: "Terminating", State: "Terminating", Detail: "held by finalizers kubernetes.io/pvc-protection, backup.example.com/snapshot", HoldsBack: true},
	}, {
		name: "an object whose cleanup is overdue names its finalizer and why, from its Stalled condition",
		object: `{apiVersion: store.example.com/v1alpha1, kind: Keyval, metadata: {name: kv, generation: 1, deletionTimestamp: "2026-01-01T00:00:00Z", finalizers: [store.example.com/volumes]},
			status: {observedGeneration: 1, conditions: [
			{type: Ready, status: "False", reason: CleanupOverdue, message: "refused: annotate reconcilekit.io/skip-cleanup=true"},
			{type: Stalled, status: "True", reason: CleanupOverdue, message: "refused: annotate reconcilekit.io/skip-cleanup=true"}]}}`,
		want: explain.Verdict{Status: "Terminating", State: "Terminating",
			Detail: "held by finalizer store.example.com/volumes; CleanupOverdue: refused: annotate reconcilekit.io/skip-cleanup=true", HoldsBack: true},
	}, {
		name: "an object whose cleanup is retried names its finalizer and why, from its Reconciling condition",
		object: `{apiVersion: store.example.com/v1alpha1, kind: Keyval, metadata: {name: kv, generation: 1, deletionTimestamp: "2026-01-01T00:00:00Z", finalizers: [store.example.com/volumes]},
			status: {observedGeneration: 1, conditions: [
			{type: Ready, status: "False", reason: Retrying, message: "refused"},
			{type: Reconciling, status: "True", reason: Retrying, message: "refused"}]}}`,
		want: explain.Verdict{Status: "Terminating", State: "Terminating",
			Detail: "held by finalizer store.example.com/volumes; Retrying: refused", HoldsBack: true},
	}, {
		name:   "a ConfigMap, which kstatus always calls Current, is Current",
		object: `{apiVersion: v1, kind: ConfigMap, metadata: {name: args}}`,
		want:   explain.Verdict{Status: "Current", State: "Current"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			u := object(t, tc.object)
			got := explain.VerdictOf(u)
			if got.Kind != u.GetKind() || got.Name != u.GetName() || got.APIVersion != u.GetAPIVersion() {
				t.Errorf("VerdictOf names %s %s %s; want %s %s %s", got.APIVersion, got.Kind, got.Name, u.GetAPIVersion(), u.GetKind(), u.GetName())
			}
			got = explain.Verdict{Status: got.Status, State: got.State, Detail: got.Detail, HoldsBack: got.HoldsBack}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("VerdictOf (-want +got):\n%s", diff)
			}
		})
	}
}

// object decodes an object written in YAML as a client reads it, its integers int64.
func object(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return u
}
