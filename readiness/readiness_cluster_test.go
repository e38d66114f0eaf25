package readiness_test

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/readiness"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/workload"
)

// nowhere is a node selector that no node matches: the pods that have it stay Pending,
// unschedulable, which holds a workload in the middle of its rollout for as long as the
// test needs.
var nowhere = map[string]string{"reconcilekit.io/no-such-node": "true"}

// TestReadinessOfAgreesWithKstatusOnRealObjects runs objects of each built-in kind
// through the states they reach on a cluster of simulated nodes, and checks on every
// reading of each object from the API server, typed and unstructured, that Of
// says what kstatus says of the unstructured form.
func TestReadinessOfAgreesWithKstatusOnRealObjects(t *testing.T) {
	cluster := reconciletest.StartCluster(t, 2)
	c := cluster.Client(t, nil)

	t.Run("Deployment", func(t *testing.T) {
		t.Parallel()
		ns := cluster.RestrictedNamespace(t)
		labels := map[string]string{"app": "web"}
		dep := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](2),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: restrictedTemplate(labels, corev1.RestartPolicyAlways),
			},
		}
		create(t, c, dep)
		complete := func(d *appsv1.Deployment) error {
			s := d.Status
			if s.ObservedGeneration != d.Generation || s.UpdatedReplicas != 2 || s.AvailableReplicas != 2 || s.Replicas != 2 {
				return fmt.Errorf("status %+v", s)
			}
			return nil
		}
		awaitState(t, c, dep, "complete", status.CurrentStatus, complete)

		// A new template whose pods cannot be scheduled: the surge pod waits, the old
		// pods serve.
		change(t, c, dep, func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Image = "registry.invalid/app:2"
			d.Spec.Template.Spec.NodeSelector = nowhere
		})
		awaitState(t, c, dep, "rolling out", status.InProgressStatus, func(d *appsv1.Deployment) error {
			if s := d.Status; s.ObservedGeneration != d.Generation || s.UpdatedReplicas < 1 || s.UpdatedReplicas == 2 && s.AvailableReplicas == 2 {
				return fmt.Errorf("status %+v", s)
			}
			return nil
		})

		change(t, c, dep, func(d *appsv1.Deployment) { d.Spec.Template.Spec.NodeSelector = nil })
		awaitState(t, c, dep, "complete after a rollout", status.CurrentStatus, complete)

		// The same stuck rollout with a progress deadline of a second: the Deployment
		// controller gives up on it.
		stuck := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stuck"},
			Spec: appsv1.DeploymentSpec{
				Replicas:                ptr.To[int32](1),
				ProgressDeadlineSeconds: ptr.To[int32](1),
				Selector:                &metav1.LabelSelector{MatchLabels: map[string]string{"app": "stuck"}},
				Template:                restrictedTemplate(map[string]string{"app": "stuck"}, corev1.RestartPolicyAlways),
			},
		}
		stuck.Spec.Template.Spec.NodeSelector = nowhere
		create(t, c, stuck)
		awaitState(t, c, stuck, "past its progress deadline", status.FailedStatus, func(d *appsv1.Deployment) error {
			for _, cond := range d.Status.Conditions {
				if cond.Type == appsv1.DeploymentProgressing && cond.Reason == "ProgressDeadlineExceeded" {
					return nil
				}
			}
			return fmt.Errorf("conditions %+v", d.Status.Conditions)
		})
	})

	t.Run("StatefulSet", func(t *testing.T) {
		t.Parallel()
		ns := cluster.RestrictedNamespace(t)
		labels := map[string]string{"app": "db"}
		sts := &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
			Spec: appsv1.StatefulSetSpec{
				Replicas:    ptr.To[int32](2),
				ServiceName: "db",
				Selector:    &metav1.LabelSelector{MatchLabels: labels},
				Template:    restrictedTemplate(labels, corev1.RestartPolicyAlways),
			},
		}
		create(t, c, sts)
		complete := func(s *appsv1.StatefulSet) error {
			st := s.Status
			if st.ObservedGeneration != s.Generation || st.ReadyReplicas != 2 || st.CurrentReplicas != 2 || st.CurrentRevision != st.UpdateRevision {
				return fmt.Errorf("status %+v", st)
			}
			return nil
		}
		awaitState(t, c, sts, "complete", status.CurrentStatus, complete)

		// A rolling update to pods that cannot be scheduled: the last pod is replaced
		// and its successor waits.
		change(t, c, sts, func(s *appsv1.StatefulSet) {
			s.Spec.Template.Spec.Containers[0].Image = "registry.invalid/app:2"
			s.Spec.Template.Spec.NodeSelector = nowhere
		})
		awaitState(t, c, sts, "rolling out", status.InProgressStatus, func(s *appsv1.StatefulSet) error {
			if st := s.Status; st.ObservedGeneration != s.Generation || st.UpdatedReplicas < 1 || st.ReadyReplicas == 2 {
				return fmt.Errorf("status %+v", st)
			}
			return nil
		})

		// Fixed, and, as a StatefulSet stuck on a pod that never became ready needs,
		// that pod deleted.
		change(t, c, sts, func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.NodeSelector = nil })
		var pods corev1.PodList
		if err := c.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodPending {
				if err := c.Delete(t.Context(), &p); client.IgnoreNotFound(err) != nil {
					t.Fatal(err)
				}
			}
		}
		awaitState(t, c, sts, "complete after a rollout", status.CurrentStatus, complete)
	})

	t.Run("DaemonSet", func(t *testing.T) {
		t.Parallel()
		ns := cluster.RestrictedNamespace(t)
		labels := map[string]string{"app": "agent"}
		ds := &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent"},
			Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: restrictedTemplate(labels, corev1.RestartPolicyAlways),
			},
		}
		create(t, c, ds)
		awaitState(t, c, ds, "complete on both nodes", status.CurrentStatus, func(d *appsv1.DaemonSet) error {
			s := d.Status
			if s.ObservedGeneration != d.Generation || s.DesiredNumberScheduled != 2 || s.UpdatedNumberScheduled != 2 || s.NumberAvailable != 2 {
				return fmt.Errorf("status %+v", s)
			}
			return nil
		})
	})

	t.Run("Job", func(t *testing.T) {
		t.Parallel()
		ns := cluster.RestrictedNamespace(t)
		tests := []struct {
			state   string
			command []string
			mutate  func(*batchv1.Job)
			want    status.Status
			reached func(*batchv1.Job) error
		}{
			{"suspended, not started", nil, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) },
				status.InProgressStatus, func(j *batchv1.Job) error { return jobCondition(j, batchv1.JobSuspended) }},
			{"running, its pod not yet scheduled", nil, func(j *batchv1.Job) { j.Spec.Template.Spec.NodeSelector = nowhere },
				status.CurrentStatus, func(j *batchv1.Job) error {
					if j.Status.StartTime == nil || j.Status.Active != 1 {
						return fmt.Errorf("status %+v", j.Status)
					}
					return nil
				}},
			{"complete", []string{"sh", "-c", "true"}, nil,
				status.CurrentStatus, func(j *batchv1.Job) error { return jobCondition(j, batchv1.JobComplete) }},
			// On the simulated nodes a Job's pods succeed whatever their command:
			// reconciletest fails only the pods that no Job owns. A deadline fails a Job.
			{"failed, past its deadline", nil, func(j *batchv1.Job) {
				j.Spec.ActiveDeadlineSeconds = ptr.To[int64](1)
				j.Spec.Template.Spec.NodeSelector = nowhere
			}, status.FailedStatus, func(j *batchv1.Job) error { return jobCondition(j, batchv1.JobFailed) }},
		}
		jobs := make([]*batchv1.Job, len(tests))
		for i, tt := range tests {
			job := &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("job-%d", i)},
				Spec: batchv1.JobSpec{
					BackoffLimit: ptr.To[int32](0),
					Template:     restrictedTemplate(nil, corev1.RestartPolicyNever),
				},
			}
			job.Spec.Template.Spec.Containers[0].Command = tt.command
			if tt.mutate != nil {
				tt.mutate(job)
			}
			create(t, c, job)
			jobs[i] = job
		}
		for i, tt := range tests {
			awaitState(t, c, jobs[i], tt.state, tt.want, tt.reached)
		}
	})

	t.Run("Pod", func(t *testing.T) {
		t.Parallel()
		ns := cluster.RestrictedNamespace(t)
		phase := func(want corev1.PodPhase) func(*corev1.Pod) error {
			return func(p *corev1.Pod) error {
				if p.Status.Phase != want {
					return fmt.Errorf("phase %q", p.Status.Phase)
				}
				return nil
			}
		}
		unschedulable := func(p *corev1.Pod) error {
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodScheduled && cond.Reason == corev1.PodReasonUnschedulable {
					return phase(corev1.PodPending)(p)
				}
			}
			return fmt.Errorf("conditions %+v", p.Status.Conditions)
		}
		type state struct {
			name    string
			want    status.Status
			reached func(*corev1.Pod) error
		}
		tests := []struct {
			restart  corev1.RestartPolicy
			command  []string
			selector map[string]string
			states   []state
		}{
			{corev1.RestartPolicyAlways, nil, nowhere, []state{
				// kstatus gives a pod 15 s to be scheduled before it calls it failed.
				{"pending, unschedulable for less than 15 s", status.InProgressStatus, unschedulable},
				{"pending, unschedulable for more than 15 s", status.FailedStatus, unschedulable},
			}},
			{corev1.RestartPolicyAlways, nil, nil, []state{
				{"running and ready", status.CurrentStatus, func(p *corev1.Pod) error {
					for _, cond := range p.Status.Conditions {
						if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
							return phase(corev1.PodRunning)(p)
						}
					}
					return fmt.Errorf("phase %q, conditions %+v", p.Status.Phase, p.Status.Conditions)
				}},
			}},
			{corev1.RestartPolicyNever, []string{"sh", "-c", "true"}, nil, []state{
				{"succeeded", status.CurrentStatus, phase(corev1.PodSucceeded)},
			}},
			{corev1.RestartPolicyNever, []string{"sh", "-c", "false"}, nil, []state{
				{"failed, its command ending in false", status.CurrentStatus, phase(corev1.PodFailed)},
			}},
		}
		pods := make([]*corev1.Pod, len(tests))
		for i, tt := range tests {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("pod-%d", i)},
				Spec:       restrictedTemplate(nil, tt.restart).Spec,
			}
			pod.Spec.Containers[0].Command = tt.command
			pod.Spec.NodeSelector = tt.selector
			create(t, c, pod)
			pods[i] = pod
		}
		for i, tt := range tests {
			for _, s := range tt.states {
				awaitState(t, c, pods[i], s.name, s.want, s.reached)
			}
		}
	})

	t.Run("PersistentVolumeClaim", func(t *testing.T) {
		t.Parallel()
		ns := cluster.RestrictedNamespace(t)
		// A storage class that does not exist: no provisioner will ever act on the claim.
		const class = "reconcilekit-by-hand"
		claim := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"},
			Spec: corev1.PersistentVolumeClaimSpec{
				StorageClassName: ptr.To(class),
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceStorage: resource.MustParse("1Gi"),
				}},
			},
		}
		create(t, c, claim)
		claimPhase := func(want corev1.PersistentVolumeClaimPhase) func(*corev1.PersistentVolumeClaim) error {
			return func(p *corev1.PersistentVolumeClaim) error {
				if p.Status.Phase != want {
					return fmt.Errorf("phase %q", p.Status.Phase)
				}
				return nil
			}
		}
		awaitState(t, c, claim, "Pending, with no provisioner", status.InProgressStatus, claimPhase(corev1.ClaimPending))

		// A volume made by hand for this very claim: the controller manager's binder
		// binds them.
		volume := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: ns + "-data"},
			Spec: corev1.PersistentVolumeSpec{
				StorageClassName:              class,
				AccessModes:                   claim.Spec.AccessModes,
				Capacity:                      claim.Spec.Resources.Requests,
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				PersistentVolumeSource: corev1.PersistentVolumeSource{
					HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + ns},
				},
				ClaimRef: &corev1.ObjectReference{Namespace: ns, Name: claim.Name, UID: claim.UID},
			},
		}
		create(t, c, volume)
		t.Cleanup(func() { _ = c.Delete(context.Background(), volume) })
		awaitState(t, c, claim, "Bound to a volume made by hand", status.CurrentStatus, claimPhase(corev1.ClaimBound))
	})

	t.Run("Service", func(t *testing.T) {
		t.Parallel()
		ns := cluster.RestrictedNamespace(t)
		const finalizer = "reconcilekit.io/held-by-the-test"
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Finalizers: []string{finalizer}},
			Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": "web"},
				Ports:    []corev1.ServicePort{{Name: "http", Port: 80}},
			},
		}
		create(t, c, svc)
		awaitState(t, c, svc, "ClusterIP, an address allocated", status.CurrentStatus, func(s *corev1.Service) error {
			if s.Spec.Type != corev1.ServiceTypeClusterIP || s.Spec.ClusterIP == "" {
				return fmt.Errorf("type %s, cluster IP %q", s.Spec.Type, s.Spec.ClusterIP)
			}
			return nil
		})

		if err := c.Delete(t.Context(), svc); err != nil {
			t.Fatal(err)
		}
		awaitState(t, c, svc, "terminating, held by a finalizer", status.TerminatingStatus, func(s *corev1.Service) error {
			if s.DeletionTimestamp == nil {
				return fmt.Errorf("no deletionTimestamp")
			}
			return nil
		})
		change(t, c, svc, func(s *corev1.Service) { s.Finalizers = nil })
	})
}

// restrictedTemplate is a pod template that a namespace enforcing the restricted Pod
// Security Standard admits.
func restrictedTemplate(labels map[string]string, restart corev1.RestartPolicy) corev1.PodTemplateSpec {
	pod := corev1.PodSpec{
		RestartPolicy: restart,
		Containers:    []corev1.Container{{Name: "app", Image: "registry.invalid/app:1"}},
	}
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: workload.Restricted(pod, 1001)}
}

func jobCondition(j *batchv1.Job, want batchv1.JobConditionType) error {
	for _, cond := range j.Status.Conditions {
		if cond.Type == want && cond.Status == corev1.ConditionTrue {
			return nil
		}
	}
	return fmt.Errorf("no %s condition: status %+v", want, j.Status)
}

func create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}

// change patches obj, read afresh, with what change does to it.
func change[T client.Object](t *testing.T, c client.Client, obj T, change func(T)) {
	t.Helper()
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	before := obj.DeepCopyObject().(T)
	change(obj)
	if err := c.Patch(t.Context(), obj, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

// awaitState reads obj from the API server until reached says it is in the named state
// and kstatus gives it want, and fails the test if, on any reading on the way,
// Of disagrees with kstatus. It logs each verdict it has not logged yet.
func awaitState[T client.Object](t *testing.T, c client.Client, obj T, state string, want status.Status, reached func(T) error) {
	t.Helper()
	gvk, err := apiutil.GVKForObject(obj, scheme.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(obj)
	logged := map[string]bool{}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		// The same version twice: the object as a typed client returns it, with its
		// apiVersion and kind empty, and its unstructured form.
		if err := c.Get(ctx, key, obj); err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := c.Get(ctx, key, u); err != nil {
			return err
		}
		if u.GetResourceVersion() != obj.GetResourceVersion() {
			return fmt.Errorf("%s %s changed between two reads", gvk.Kind, key)
		}

		reachedErr := reached(obj)
		verdict, ok := compareWithKstatus(t, gvk.Kind, key, obj, u)
		if !ok {
			return nil // the test has failed; no need to wait on
		}
		at := state
		if reachedErr != nil || verdict.kstatus.Status != want {
			at = "on the way to " + state
		}
		if line := fmt.Sprintf("%s %s, %s: %s", gvk.Kind, key.Name, at, verdict); !logged[line] {
			logged[line] = true
			t.Log(line)
		}
		if reachedErr != nil {
			return fmt.Errorf("%s %s is not %s yet: %w", gvk.Kind, key, state, reachedErr)
		}
		if verdict.kstatus.Status != want {
			return fmt.Errorf("%s %s, %s: kstatus says %s (%q), want %s", gvk.Kind, key, state, verdict.kstatus.Status, verdict.kstatus.Message, want)
		}
		return nil
	})
	if t.Failed() {
		t.FailNow()
	}
}

type verdicts struct {
	kstatus   *status.Result
	readiness readiness.State
}

func (v verdicts) String() string {
	return fmt.Sprintf("kstatus %s (%q); Of %s, reason %s, available %t (%q)",
		v.kstatus.Status, v.kstatus.Message, v.readiness.Rollout, v.readiness.Reason, v.readiness.Available, v.readiness.Message)
}

// compareWithKstatus reads the readiness of typed and of u, the same version of one
// object, and reports, as errors of the test, where either departs from kstatus' verdict
// on u as Of's documentation maps it, or, for a workload, from serving.
func compareWithKstatus(t *testing.T, kind string, key client.ObjectKey, typed client.Object, u *unstructured.Unstructured) (verdicts, bool) {
	t.Helper()
	// kstatus and Of both read the clock (a pod unschedulable for 15 s fails), so
	// the readings are taken between two of kstatus' and taken again if its verdict moved
	// in between: a threshold is crossed once.
	for {
		before, err := status.Compute(u.DeepCopy())
		if err != nil {
			t.Errorf("kstatus cannot read %s %s: %v", kind, key, err)
			return verdicts{}, false
		}
		readings, err := readingsOf(typed, u)
		if err != nil {
			t.Errorf("%s %s: %v", kind, key, err)
			return verdicts{}, false
		}
		if after, err := status.Compute(u.DeepCopy()); err == nil && after.Status != before.Status {
			continue
		}
		return agreeWithKstatus(t, kind, key, typed, before, readings)
	}
}

// readingsOf is Of of the typed and of the unstructured form of one object.
func readingsOf(typed client.Object, u *unstructured.Unstructured) ([2]readiness.State, error) {
	var got [2]readiness.State
	for i, obj := range []client.Object{typed, u.DeepCopy()} {
		r, err := readiness.Of(obj)
		if err != nil {
			return got, fmt.Errorf("Of(%s): %w", [...]string{"typed", "unstructured"}[i], err)
		}
		got[i] = r
	}
	return got, nil
}

// agreeWithKstatus reports, as errors of the test, where either reading of typed departs
// from kstatus' verdict res as Of's documentation maps it, or, for a workload,
// from serving.
func agreeWithKstatus(t *testing.T, kind string, key client.ObjectKey, typed client.Object, res *status.Result, readings [2]readiness.State) (verdicts, bool) {
	t.Helper()
	var wantRollout readiness.Rollout
	var wantReason string
	switch res.Status {
	case status.CurrentStatus:
		wantRollout, wantReason = readiness.RolloutComplete, readiness.ReasonCurrent
	case status.InProgressStatus:
		wantRollout, wantReason = readiness.RolloutInProgress, readiness.ReasonInProgress
	case status.TerminatingStatus:
		wantRollout, wantReason = readiness.RolloutInProgress, readiness.ReasonTerminating
	case status.FailedStatus:
		wantRollout, wantReason = readiness.RolloutFailed, readiness.ReasonFailed
		for _, cond := range res.Conditions {
			if cond.Type == status.ConditionStalled && conditions.ValidateReason(cond.Reason) == nil {
				wantReason = cond.Reason
			}
		}
	default:
		t.Errorf("kstatus says %s of %s %s, a status Of does not expect", res.Status, kind, key)
		return verdicts{}, false
	}

	wantAvailable, workload := serves(typed)
	if !workload {
		wantAvailable = res.Status == status.CurrentStatus
	}
	for i, got := range readings {
		form := [...]string{"typed", "unstructured"}[i]
		if got.Rollout != wantRollout || got.Reason != wantReason || got.Available != wantAvailable ||
			res.Message != "" && got.Message != res.Message {
			t.Errorf("%s %s read %s: Of gives %+v; kstatus says %s (%q, conditions %+v), so want rollout %s, reason %s, available %t",
				kind, key, form, got, res.Status, res.Message, res.Conditions, wantRollout, wantReason, wantAvailable)
			return verdicts{}, false
		}
	}
	return verdicts{kstatus: res, readiness: readings[0]}, true
}

// serves is what Of's Available says of a workload, serving by the rule of its kind
// (State.Available) whatever kstatus says of its rollout; workload is false for the
// other kinds, whose Available is kstatus' Current.
func serves(obj client.Object) (available, workload bool) {
	majority := func(want, ready int32) bool { return want == 0 || ready > want/2 }
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return readiness.Deployment(o).Available, true
	case *appsv1.StatefulSet:
		return majority(ptr.Deref(o.Spec.Replicas, 1), o.Status.ReadyReplicas), true
	case *appsv1.DaemonSet:
		return o.Status.ObservedGeneration > 0 && majority(o.Status.DesiredNumberScheduled, o.Status.NumberReady), true
	}
	return false, false
}
