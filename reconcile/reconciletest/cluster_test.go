package reconciletest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/reconcilekit/reconcilekit/internal/fasttier"
)

// shared is the cluster the package's tests share, started by the first test that needs
// it and stopped by TestMain.
var shared struct {
	once sync.Once
	cp   *ControlPlane
	err  error
}

func cluster(t *testing.T) *ControlPlane {
	t.Helper()
	fasttier.Skip(t)
	shared.once.Do(func() {
		shared.cp, shared.err = Start(context.Background(), Options{Nodes: 2})
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.cp
}

func TestMain(m *testing.M) {
	fasttier.SkipExamples("Example", "ExampleReconcilerTests_RunCase")
	code := m.Run()
	if shared.cp != nil {
		if err := shared.cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

func deployment(namespace, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "app", Image: "registry.invalid/app:1"},
				}},
			},
		},
	}
}

func TestClusterRollsOutADeployment(t *testing.T) {
	cp := cluster(t)
	c := cp.Client(t, nil)
	ns := cp.Namespace(t)

	web := deployment(ns, "web", 3)
	if err := c.Create(t.Context(), web); err != nil {
		t.Fatal(err)
	}

	Eventually(t, func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(web), web); err != nil {
			return err
		}
		available := false
		for _, cond := range web.Status.Conditions {
			available = available || cond.Type == appsv1.DeploymentAvailable && cond.Status == corev1.ConditionTrue
		}
		if !available || web.Status.AvailableReplicas != 3 {
			return fmt.Errorf("deployment not available: %+v", web.Status)
		}
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			return err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && strings.HasPrefix(p.Spec.NodeName, "kwok-node-") {
				running++
			}
		}
		if running != 3 {
			return fmt.Errorf("%d of %d pods Running on kwok nodes", running, len(pods.Items))
		}
		return nil
	})
}

func TestClusterFailsToPullABadImage(t *testing.T) {
	cp := cluster(t)
	c := cp.Client(t, nil)
	ns := cp.Namespace(t)

	// One container of a bad image, one of a good: the pod waits for the bad one.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "app", Image: "app:" + BadImageTag},
			{Name: "sidecar", Image: "sidecar:1"},
		}},
	}
	if err := c.Create(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	Eventually(t, func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
		waiting := map[string]string{}
		for _, cs := range pod.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil {
				waiting[cs.Name] = w.Reason
			}
		}
		if pod.Status.Phase != corev1.PodPending || waiting["app"] != "ImagePullBackOff" || waiting["sidecar"] != "ContainerCreating" {
			return fmt.Errorf("pod %s, containers waiting %v; want Pending, app in ImagePullBackOff", pod.Status.Phase, waiting)
		}
		var events corev1.EventList
		if err := c.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.UID == pod.UID && e.Type == corev1.EventTypeWarning && e.Reason == "Failed" && e.Message == "Error: ImagePullBackOff" {
				return nil
			}
		}
		return fmt.Errorf("no Warning event Failed of the pod among %d events", len(events.Items))
	})
	// It stays so.
	time.Sleep(2 * time.Second)
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	if pod.Status.Phase != corev1.PodPending {
		t.Errorf("the pod of a bad image is %s; want it to stay Pending", pod.Status.Phase)
	}
}

func TestClusterEndsPodsThatRunOnce(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		command     []string
		phase       corev1.PodPhase
		exitCode    int32
		message     string
	}{
		{"succeeds by default", nil, nil, corev1.PodSucceeded, 0, ""},
		{"succeeds running a shell command", nil, []string{"sh", "-c", "echo hello"}, corev1.PodSucceeded, 0, ""},
		{"fails running false, as a shell would", nil, []string{"false"}, corev1.PodFailed, 1, "exited with code 1"},
		{"fails running exit 1, as a shell would", nil, []string{"sh", "-c", "exit 1"}, corev1.PodFailed, 1, "exited with code 1"},
		{"fails with the exit code and message it is annotated with",
			map[string]string{ExitCodeAnnotation: "1", MessageAnnotation: "out of coffee"}, nil,
			corev1.PodFailed, 1, "out of coffee"},
		{"fails with a message that gives the exit code",
			map[string]string{ExitCodeAnnotation: "3", RunForAnnotation: "100ms"}, nil,
			corev1.PodFailed, 3, "exited with code 3"},
	}
	cp := cluster(t)
	c := cp.Client(t, nil)
	ns := cp.Namespace(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("once-%d", i), Annotations: tt.annotations},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "job", Image: "busybox", Command: tt.command}},
				},
			}
			if err := c.Create(t.Context(), pod); err != nil {
				t.Fatal(err)
			}

			Eventually(t, func(ctx context.Context) error {
				if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
					return err
				}
				if pod.Status.Phase != tt.phase {
					return fmt.Errorf("phase %q", pod.Status.Phase)
				}
				return nil
			})
			terminated := pod.Status.ContainerStatuses[0].State.Terminated
			if terminated == nil || terminated.ExitCode != tt.exitCode || terminated.Message != tt.message {
				t.Errorf("container state %+v, want exit code %d and message %q", pod.Status.ContainerStatuses[0].State, tt.exitCode, tt.message)
			}
		})
	}
}

func TestClusterBindsAClaimOfTheDefaultStorageClass(t *testing.T) {
	cp := cluster(t)
	c := cp.Client(t, nil)
	ns := cp.Namespace(t)
	// No class named: the default one is given to it, as a StatefulSet's claims are.
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if err := c.Create(t.Context(), claim); err != nil {
		t.Fatal(err)
	}
	Eventually(t, func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(claim), claim); err != nil {
			return err
		}
		if claim.Status.Phase != corev1.ClaimBound {
			return fmt.Errorf("the claim is %s", claim.Status.Phase)
		}
		return nil
	})
	if class := ptr.Deref(claim.Spec.StorageClassName, ""); class != StorageClassName || claim.Spec.VolumeName == "" {
		t.Errorf("the claim is bound to volume %q of class %q; want a volume of class %s", claim.Spec.VolumeName, class, StorageClassName)
	}
}

func TestClusterCollectsTheGarbageOfADeletedOwner(t *testing.T) {
	cp := cluster(t)
	c := cp.Client(t, nil)
	ns := cp.Namespace(t)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"}}
	if err := c.Create(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	owned := deployment(ns, "owned", 1)
	if err := controllerutil.SetControllerReference(owner, owned, scheme.Scheme); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(t.Context(), owned); err != nil {
		t.Fatal(err)
	}

	if err := c.Delete(t.Context(), owner); err != nil {
		t.Fatal(err)
	}

	Eventually(t, func(ctx context.Context) error {
		err := c.Get(ctx, client.ObjectKeyFromObject(owned), owned)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("owned deployment still there (%v)", err)
	})
}

func TestCounterCountsRequestsExactly(t *testing.T) {
	cp := cluster(t)
	ns := cp.Namespace(t)
	var requests Counter
	c, err := client.New(requests.Wrap(cp.Config), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}}

	tests := []struct {
		name           string
		do             func(ctx context.Context) error
		verb, resource string
		writes, reads  int
	}{
		{"a create is one create", func(ctx context.Context) error { return c.Create(ctx, settings) },
			"create", "configmaps", 1, 0},
		{"a get is one get", func(ctx context.Context) error { return c.Get(ctx, client.ObjectKeyFromObject(settings), settings) },
			"get", "configmaps", 0, 1},
		{"a list is one list", func(ctx context.Context) error { return c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns)) },
			"list", "configmaps", 0, 1},
		{"a delete is one delete", func(ctx context.Context) error { return c.Delete(ctx, settings) },
			"delete", "configmaps", 1, 0},
		{"a review is a question, not a write", func(ctx context.Context) error {
			return c.Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "configmaps"}}})
		}, "create", "selfsubjectaccessreviews", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requests.Reset()
			if err := tt.do(t.Context()); err != nil {
				t.Fatal(err)
			}
			if requests.Count(tt.verb, tt.resource) != 1 || requests.Writes() != tt.writes || requests.Reads() != tt.reads {
				t.Errorf("want one %s of %s, %d writes and %d reads; got\n%s", tt.verb, tt.resource, tt.writes, tt.reads, &requests)
			}
		})
	}
}

func TestAPIServerPIDIsTheRunningAPIServer(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("APIServerPID needs /proc")
	}
	cp := cluster(t)
	pid, err := cp.APIServerPID()
	if err != nil {
		t.Fatal(err)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cmdline), "kube-apiserver") {
		t.Errorf("process %d runs %q, want kube-apiserver", pid, strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
}

func TestPIDsNameEveryComponentOfACluster(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("PIDs needs /proc")
	}
	pids := cluster(t).PIDs()
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"} {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pids[name]))
		if err != nil || !strings.Contains(string(cmdline), name) {
			t.Errorf("PIDs()[%q] = %d, running %q (%v); want the process of %s", name, pids[name], strings.ReplaceAll(string(cmdline), "\x00", " "), err, name)
		}
	}
}

func TestFaultsReachTheCaller(t *testing.T) {
	cp := cluster(t)
	ns := cp.Namespace(t)
	faults := &Faults{Verbs: []string{"create"}, Resources: []string{"configmaps"}, Rate: 1, Code: http.StatusConflict}
	c, err := client.New(faults.Wrap(cp.Config), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}}

	err = c.Create(t.Context(), settings)

	if !apierrors.IsConflict(err) {
		t.Errorf("create returned %v, want a conflict", err)
	}
	if faults.Injected() != 1 {
		t.Errorf("injected %d faults, want 1", faults.Injected())
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(settings), settings); !apierrors.IsNotFound(err) {
		t.Errorf("the faulted create reached the API server: get returned %v", err)
	}
}

func TestRestrictedNamespaceAdmitsOnlyRestrictedPods(t *testing.T) {
	restricted := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		RunAsNonRoot:             ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	tests := []struct {
		name     string
		security *corev1.SecurityContext
		admitted bool
	}{
		{"admits a restricted pod", restricted, true},
		{"rejects a privileged pod", &corev1.SecurityContext{Privileged: ptr.To(true)}, false},
	}
	cp := cluster(t)
	c := cp.Client(t, nil)
	ns := cp.RestrictedNamespace(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("pod-%d", i)},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "app", Image: "registry.invalid/app:1", SecurityContext: tt.security},
				}},
			}
			err := c.Create(t.Context(), pod)
			if tt.admitted && err != nil || !tt.admitted && !apierrors.IsForbidden(err) {
				t.Errorf("create returned %v", err)
			}
		})
	}
}

func TestConfigForIsForbiddenWhatItsRoleDoesNotGrant(t *testing.T) {
	cp := cluster(t)
	admin := cp.Client(t, nil)
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "configmap-reader"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}},
		},
	}
	if err := admin.Create(t.Context(), role); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), role) })
	ns := cp.Namespace(t)

	reader, err := client.New(cp.ConfigFor(t, "reader", role.Name), client.Options{})
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		do      func(ctx context.Context) error
		allowed bool
	}{
		{"lists config maps", func(ctx context.Context) error {
			return reader.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns))
		}, true},
		{"creates no config map", func(ctx context.Context) error {
			return reader.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"}})
		}, false},
		{"lists no secrets", func(ctx context.Context) error {
			return reader.List(ctx, &corev1.SecretList{}, client.InNamespace(ns))
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do(t.Context())
			if tt.allowed && err != nil || !tt.allowed && !apierrors.IsForbidden(err) {
				t.Errorf("got %v", err)
			}
		})
	}
}

func TestStopRemovesTheDirectoriesOfTheVolumesTheClusterProvisioned(t *testing.T) {
	fasttier.Skip(t)
	cp, err := Start(t.Context(), Options{Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	c := cp.Client(t, nil)
	// In the default namespace: a namespace of the test's would be deleted after Stop.
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if err := c.Create(t.Context(), claim); err != nil {
		t.Fatal(err)
	}
	var dir string
	Eventually(t, func(ctx context.Context) error {
		var volumes corev1.PersistentVolumeList
		if err := c.List(ctx, &volumes); err != nil {
			return err
		}
		for _, v := range volumes.Items {
			if v.Spec.HostPath != nil {
				dir = v.Spec.HostPath.Path
				return nil
			}
		}
		return errors.New("no volume provisioned yet")
	})
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the provisioned volume's directory: %v", err)
	}

	if err := cp.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Stop, the volume's directory %s: %v; want it removed", dir, err)
	}
}
