package reconciletest

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/ownership"
)

// configurer is the reconciler the table's own tests drive: it gives each Deployment a
// ConfigMap, named after it and controlled by it, that holds its image, refuses a
// ConfigMap of that name that it does not control, and records the generation it saw in
// the Deployment's status.
type configurer struct {
	c        client.Client
	recorder events.EventRecorder
}

func newConfigurer(d Deps) rtreconcile.Reconciler {
	return &configurer{c: d.Client, recorder: d.Recorder}
}

func (r *configurer) Reconcile(ctx context.Context, req rtreconcile.Request) (rtreconcile.Result, error) {
	dep := &appsv1.Deployment{}
	if err := r.c.Get(ctx, req.NamespacedName, dep); err != nil {
		return rtreconcile.Result{}, client.IgnoreNotFound(err)
	}
	want := configMapOf(dep)
	live := &corev1.ConfigMap{}
	switch err := r.c.Get(ctx, client.ObjectKeyFromObject(want), live); {
	case apierrors.IsNotFound(err):
		if err := r.c.Create(ctx, want); err != nil {
			return rtreconcile.Result{}, err
		}
		r.recorder.Eventf(dep, nil, corev1.EventTypeNormal, "Configured", "Configure", "created ConfigMap %s", want.Name)
	case err != nil:
		return rtreconcile.Result{}, err
	case !metav1.IsControlledBy(live, dep):
		r.recorder.Eventf(dep, nil, corev1.EventTypeWarning, "ConfigMapNotOwned", "Configure", "ConfigMap %s is not this Deployment's", want.Name)
		return rtreconcile.Result{RequeueAfter: 60_000_000_000}, nil
	case live.Data["image"] != want.Data["image"]:
		live.Data = want.Data
		if err := r.c.Update(ctx, live); err != nil {
			return rtreconcile.Result{}, err
		}
	}
	if dep.Status.ObservedGeneration != dep.Generation {
		before := dep.DeepCopy()
		dep.Status.ObservedGeneration = dep.Generation
		if err := r.c.Status().Patch(ctx, dep, client.MergeFrom(before)); err != nil {
			return rtreconcile.Result{}, err
		}
	}
	return rtreconcile.Result{}, nil
}

func configMapOf(dep *appsv1.Deployment) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: dep.Namespace, Name: dep.Name + "-config"},
		Data:       map[string]string{"image": dep.Spec.Template.Spec.Containers[0].Image},
	}
	cm.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(dep, appsv1.SchemeGroupVersion.WithKind("Deployment"))}
	return cm
}

// roller is a reconciler that gives each ConfigMap a Deployment of its name that reads it
// by its namespaced name and rolls when it changes: its pod template carries the
// ConfigMap's config hash, which covers the namespace.
type roller struct{ c client.Client }

func newRoller(d Deps) rtreconcile.Reconciler { return &roller{c: d.Client} }

func (r *roller) Reconcile(ctx context.Context, req rtreconcile.Request) (rtreconcile.Result, error) {
	cm := &corev1.ConfigMap{}
	if err := r.c.Get(ctx, req.NamespacedName, cm); err != nil {
		return rtreconcile.Result{}, client.IgnoreNotFound(err)
	}
	hash, err := ownership.ConfigHash(cm)
	if err != nil {
		return rtreconcile.Result{}, err
	}
	want := rolled(cm.Namespace, hash)
	want.Namespace = cm.Namespace
	live := &appsv1.Deployment{}
	switch err := r.c.Get(ctx, client.ObjectKeyFromObject(want), live); {
	case apierrors.IsNotFound(err):
		return rtreconcile.Result{}, r.c.Create(ctx, want)
	case err != nil:
		return rtreconcile.Result{}, err
	case live.Spec.Template.Annotations[ownership.ConfigHashAnnotation] != hash:
		live.Spec.Template = want.Spec.Template
		return rtreconcile.Result{}, r.c.Update(ctx, live)
	}
	return rtreconcile.Result{}, nil
}

// rolled is the Deployment roller wants for the ConfigMap settings in namespace ns.
func rolled(ns, configHash string) *appsv1.Deployment {
	labels := map[string]string{"app": "settings"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "settings"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{ownership.ConfigHashAnnotation: configHash}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "app:1",
					Env: []corev1.EnvVar{{Name: "SETTINGS", Value: "settings." + ns}},
				}}},
			},
		},
	}
}

// web is the Deployment the cases reconcile, as a table writes it: no namespace.
func web(image string) *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}},
			},
		},
	}
}

// webConfig is the ConfigMap web wants, owned by it: the owner reference has no UID,
// which the case fills in.
func webConfig(image string) *corev1.ConfigMap {
	return configMapOf(web(image))
}

// webService is a Service in front of web's pods.
func webService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80}},
		},
	}
}

// errorRecorder is a testing.TB whose errors are recorded, not reported, to test the
// failure messages of a case that must fail.
type errorRecorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *errorRecorder) Helper() {}

func (r *errorRecorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *errorRecorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }

func (r *errorRecorder) message() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errors, "\n")
}

// TestReconcilerTests proves the table on one API server, started once for the lot.
func TestReconcilerTests(t *testing.T) {
	cp := StartAPIServer(t)
	table := ReconcilerTests{ControlPlane: cp, Reconciler: newConfigurer}

	t.Run("cases that hold", func(t *testing.T) {
		table := table
		table.Cases = []ReconcilerTestCase{{
			Name:   "a new Deployment gets its ConfigMap",
			Object: web("nginx:1"),
			WantRequests: []string{
				"create configmaps",
				"patch deployments/status",
			},
			WantObjects: []client.Object{webConfig("nginx:1")},
			WantStatus:  appsv1.DeploymentStatus{ObservedGeneration: 1},
			WantEvents:  []string{"Normal Configured created ConfigMap web-config"},
		}, {
			Name:             "a converged Deployment makes no writes",
			Object:           web("nginx:1"),
			ReconciledBefore: 1,
			WantObjects:      []client.Object{webConfig("nginx:1")},
			WantStatus:       appsv1.DeploymentStatus{ObservedGeneration: 1},
		}, {
			Name:         "a stale ConfigMap is updated",
			Object:       web("nginx:2"),
			Given:        []client.Object{webConfig("nginx:1")}, // owned by the Deployment, created before it
			WantRequests: []string{"update configmaps", "patch deployments/status"},
			WantObjects:  []client.Object{webConfig("nginx:2")},
		}, {
			// The API server allocates a Service's cluster IP; a dry run allocates another.
			Name:         "a Service compares without the cluster IP the API server gave it",
			Object:       web("nginx:1"),
			Given:        []client.Object{webService()},
			WantRequests: []string{"create configmaps", "patch deployments/status"},
			WantObjects:  []client.Object{webConfig("nginx:1"), webService()},
			WantEvents:   []string{"Normal Configured created ConfigMap web-config"},
		}, {
			Name:   "a foreign ConfigMap, given as YAML, is left alone",
			Object: web("nginx:1"),
			GivenYAML: `
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data:
  image: someone-elses
`,
			WantObjects: []client.Object{&corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "web-config"},
				Data:       map[string]string{"image": "someone-elses"},
			}},
			WantEvents: []string{"Warning ConfigMapNotOwned ConfigMap web-config is not this Deployment's"},
			WantResult: rtreconcile.Result{RequeueAfter: 60_000_000_000},
		}, {
			Name:         "a create that fails is sent, and its error returned",
			Object:       web("nginx:1"),
			Faults:       &Faults{Verbs: []string{"create"}, Resources: []string{"configmaps"}, Rate: 1, Code: http.StatusServiceUnavailable},
			WantRequests: []string{"create configmaps"},
			WantObjectsYAML: `
apiVersion: v1
kind: ConfigMap
metadata: {name: none-of-this-kind}
`,
			WantErr: "fault injected",
		}}
		// The last case wants a ConfigMap it never has: turn that into the proof that a
		// missing object fails a case.
		last := table.Cases[len(table.Cases)-1]
		table.Cases = table.Cases[:len(table.Cases)-1]
		table.Run(t)

		rec := &errorRecorder{TB: t}
		table.RunCase(rec, last)
		if msg := rec.message(); msg != "ConfigMap none-of-this-kind does not exist; WantObjects has it" {
			t.Errorf("a case whose wanted object is missing said:\n%s", msg)
		}
	})

	t.Run("a wrong expectation fails with a diff and the requests sent", func(t *testing.T) {
		rec := &errorRecorder{TB: t}
		table.RunCase(rec, ReconcilerTestCase{
			Name:         "wrong",
			Object:       web("nginx:1"),
			WantRequests: []string{"create configmaps"},
			WantObjects:  []client.Object{webConfig("nginx:2")},
			WantStatus:   appsv1.DeploymentStatus{ObservedGeneration: 2},
		})
		msg := rec.message()
		t.Logf("the failure message:\n%s", msg)
		// go-cmp varies its diffs' spaces on purpose, so that no test depends on
		// them; words and their order are what a person reads.
		words := strings.Join(strings.Fields(msg), " ")
		for _, want := range []string{
			// the writes, with the one not expected marked
			"the writes (-want +got):",
			`+ "patch deployments/status",`,
			// every request, reads included, with the answers
			"every request the reconcile sent, in order:\n  get deployments web → 200\n  get configmaps web-config → 404\n  create configmaps → 201\n  patch deployments/status web → 200\n",
			// the object, field by field
			"ConfigMap web-config (-want +got):",
			`- Data: map[string]string{"image": "nginx:2"},`,
			`+ Data: map[string]string{"image": "nginx:1"},`,
			// the status
			"the status of Deployment web (-want +got):",
			"- 	ObservedGeneration: 2,",
			"+ 	ObservedGeneration: 1,",
			// the event nobody expected
			"the events (-want +got):",
			`+ {"Normal Configured created ConfigMap web-config"},`,
		} {
			if !strings.Contains(words, strings.Join(strings.Fields(want), " ")) {
				t.Errorf("the failure message lacks %q", want)
			}
		}
	})

	t.Run("an unexpected write fails the case", func(t *testing.T) {
		rec := &errorRecorder{TB: t}
		table.RunCase(rec, ReconcilerTestCase{
			Name:             "unexpected",
			Object:           web("nginx:1"),
			Given:            []client.Object{webConfig("nginx:0")},
			ReconciledBefore: 0,
			WantObjects:      []client.Object{webConfig("nginx:1")},
			WantStatus:       appsv1.DeploymentStatus{ObservedGeneration: 1},
		})
		msg := rec.message()
		if !strings.Contains(msg, `"update configmaps", "patch deployments/status"`) {
			t.Errorf("a case that expected no writes said:\n%s", msg)
		}
	})

	t.Run("an object a case does not name fails it", func(t *testing.T) {
		rec := &errorRecorder{TB: t}
		table.RunCase(rec, ReconcilerTestCase{
			Name:         "extra",
			Object:       web("nginx:1"),
			Given:        []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stray"}}},
			WantRequests: []string{"create configmaps", "patch deployments/status"},
			WantObjects:  []client.Object{webConfig("nginx:1")},
			WantStatus:   appsv1.DeploymentStatus{ObservedGeneration: 1},
			WantEvents:   []string{"Normal Configured created ConfigMap web-config"},
		})
		if msg := rec.message(); msg != "ConfigMap stray exists; WantObjects does not have it" {
			t.Errorf("a case with an object it does not name said:\n%s", msg)
		}
	})

	t.Run("cases never see each other's objects", func(t *testing.T) {
		// Each case creates web-config in parallel with the others; each sees its own
		// alone, and no case's create finds one already there.
		table := table
		for i := range 8 {
			image := fmt.Sprintf("nginx:%d", i)
			table.Cases = append(table.Cases, ReconcilerTestCase{
				Name:         image,
				Object:       web(image),
				WantRequests: []string{"create configmaps", "patch deployments/status"},
				WantObjects:  []client.Object{webConfig(image)},
				WantEvents:   []string{"Normal Configured created ConfigMap web-config"},
			})
		}
		table.Run(t)
	})

	t.Run("a case names its namespace and config hashes in the objects it gives and wants", func(t *testing.T) {
		table := ReconcilerTests{ControlPlane: cp, Reconciler: newRoller}
		settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"greeting": "hello"}}
		table.Cases = []ReconcilerTestCase{{
			Name:         "a Deployment gets the address and the hash of its settings",
			Object:       settings,
			WantRequests: []string{"create deployments"},
			WantObjects:  []client.Object{settings, rolled(CaseNamespace, CaseConfigHash(settings))},
		}, {
			Name:        "a Deployment that has them already is left alone",
			Object:      settings,
			Given:       []client.Object{rolled(CaseNamespace, CaseConfigHash(settings))},
			WantObjects: []client.Object{settings, rolled(CaseNamespace, CaseConfigHash(settings))},
		}, {
			Name:   "a Deployment whose hash is stale is updated, as YAML says",
			Object: settings,
			Given:  []client.Object{rolled(CaseNamespace, "stale")},
			WantObjectsYAML: `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {greeting: hello}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: settings}
spec:
  selector: {matchLabels: {app: settings}}
  template:
    metadata:
      labels: {app: settings}
      annotations: {` + ownership.ConfigHashAnnotation + `: "` + CaseConfigHash(settings) + `"}
    spec:
      containers:
      - name: app
        image: app:1
        env: [{name: SETTINGS, value: "settings.{namespace}"}]
`,
			WantRequests: []string{"update deployments"},
		}}
		table.Run(t)

		// And a wrong hash is a difference.
		rec := &errorRecorder{TB: t}
		other := settings.DeepCopy()
		other.Data["greeting"] = "bye"
		table.RunCase(rec, ReconcilerTestCase{
			Name:         "wrong",
			Object:       settings,
			WantRequests: []string{"create deployments"},
			WantObjects:  []client.Object{settings, rolled(CaseNamespace, CaseConfigHash(other))},
		})
		if msg := rec.message(); !strings.Contains(msg, "Deployment settings (-want +got)") || !strings.Contains(msg, ownership.ConfigHashAnnotation) {
			t.Errorf("a case that wants the hash of other settings said:\n%s", msg)
		}
	})

	t.Run("cluster-scoped objects are created, then deleted", func(t *testing.T) {
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "reconciletest-table-reader"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}}
		table := table
		table.Cases = []ReconcilerTestCase{{
			Name:         "given a ClusterRole",
			Object:       web("nginx:1"),
			Given:        []client.Object{role},
			WantRequests: []string{"create configmaps", "patch deployments/status"},
			WantObjects:  []client.Object{webConfig("nginx:1"), role},
			WantEvents:   []string{"Normal Configured created ConfigMap web-config"},
		}}
		table.Run(t)
		err := cp.client.Get(t.Context(), client.ObjectKeyFromObject(role), &rbacv1.ClusterRole{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("the case's ClusterRole is still there (%v)", err)
		}
	})
}
