package shapes_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/readiness"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest/explore"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// ready is the status the shell writes of an object whose logic is done, in a table case.
func ready() Status {
	return Status{ObservedGeneration: 1, Conditions: []metav1.Condition{{
		Type: conditions.Ready, Status: metav1.ConditionTrue, ObservedGeneration: 1, Reason: "Reconciled",
		LastTransitionTime: metav1.NewTime(reconciletest.DefaultNow),
	}}}
}

// controlledBy is the controller reference of a child of the shapes' kind, named.
func controlledBy(kind, name string) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: version.String(), Kind: kind, Name: name, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
}

// awaitReady waits until obj, of the shapes' kinds, is Ready.
func awaitReady(t *testing.T, e *reconciletest.Env, obj client.Object) {
	t.Helper()
	awaitCondition(t, e, obj, conditions.Ready, metav1.ConditionTrue, "")
}

// awaitCondition waits until obj, of the shapes' kinds, has the condition typ of status,
// and of reason unless it is empty.
func awaitCondition(t *testing.T, e *reconciletest.Env, obj client.Object, typ string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	reconciletest.Eventually(t, func(ctx context.Context) error {
		got := obj.DeepCopyObject().(client.Object)
		if err := e.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
			return err
		}
		c := conditions.Find(got.(conditions.Setter), typ)
		if c == nil || c.Status != status || (reason != "" && c.Reason != reason) {
			return fmt.Errorf("want %s %s %s; the conditions are %v", typ, status, reason, got.(conditions.Setter).GetConditions())
		}
		return nil
	})
}

// awaitGone waits until obj no longer exists.
func awaitGone(t *testing.T, e *reconciletest.Env, obj client.Object) {
	t.Helper()
	reconciletest.Eventually(t, func(ctx context.Context) error {
		err := e.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
		if err == nil {
			return fmt.Errorf("%s still exists", obj.GetName())
		}
		return client.IgnoreNotFound(err)
	})
}

// explored explores a workload of the operator with a brief budget, and wants no
// violation.
func explored(t *testing.T, x explore.Exploration) {
	t.Helper()
	if testing.Short() {
		t.Skip("explores")
	}
	x.Operator = operator
	if x.Budget == 0 {
		x.Budget = 4
	}
	if rep := explore.Run(t, x); len(rep.Violations) > 0 {
		t.Errorf("violations: %v", rep.Violations)
	}
}

// Shape (a): a namespaced owner of namespaced children, as the examples: a ConfigMap of
// its value and a Deployment of that image.

func sites() *reconcile.Controller[*Site] {
	return reconcile.For(&Site{}, reconcile.LogicFunc[*Site](func(ctx context.Context, s *Site, sc reconcile.Scope) requeue.Outcome {
		if _, _, err := ownership.Ensure(ctx, sc.Writer, s, siteConfig(s.Namespace, s.Name, s.Spec.Value)); err != nil {
			return requeue.Retry(err)
		}
		dep, _, err := ownership.Ensure(ctx, sc.Writer, s, siteDeployment(s.Namespace, s.Name, s.Spec.Value))
		if err != nil {
			return requeue.Retry(err)
		}
		readiness.Deployment(dep).Mark(s) // the Deployment's rollout is the site's
		return requeue.Done()
	}), "site-operator", reconcile.WithChildren(&corev1.ConfigMap{}, &appsv1.Deployment{}))
}

func siteDeployment(namespace, name, image string) *appsv1.Deployment {
	labels := map[string]string{"site": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "site-" + name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{Name: "web", Image: image, SecurityContext: &corev1.SecurityContext{
						AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					}}},
				},
			},
		},
	}
}

func siteConfig(namespace, name, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "site-" + name}, Data: map[string]string{"value": value}}
}

func site(namespace, value string) *Site {
	return &Site{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "web"}, Spec: Spec{Value: value}}
}

// Shape (c): a cluster-scoped owner of cluster-scoped children: a ClusterRole that reads
// ConfigMaps and its binding to the group the owner names.

func accesses() *reconcile.Controller[*Access] {
	return reconcile.For(&Access{}, reconcile.LogicFunc[*Access](func(ctx context.Context, a *Access, sc reconcile.Scope) requeue.Outcome {
		role, binding := accessOf(a.Name, a.Spec.Value)
		if _, _, err := ownership.Ensure(ctx, sc.Writer, a, role); err != nil {
			return requeue.Retry(err)
		}
		_, _, err := ownership.Ensure(ctx, sc.Writer, a, binding)
		return requeue.FromError(err)
	}), "access-operator", reconcile.WithChildren(&rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{}))
}

func accessOf(name, group string) (*rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding) {
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "access-" + name},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "access-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: group}},
	}
	return role, binding
}

func access(name, group string) *Access {
	return &Access{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: Spec{Value: group}}
}

// Shape (e): an owner with no children, whose finalizer deletes what it stands for
// outside the cluster: a bucket of a stand-in HTTP service.

const bucketFinalizer = "shapes.example.com/bucket"

// buckets is the service outside the cluster, an HTTP server of the test's that keeps a
// set of bucket names: PUT /name makes one, DELETE /name deletes it, GET / lists them.
type bucketService struct {
	mu    sync.Mutex
	names map[string]bool
	*httptest.Server
}

func newBucketService() *bucketService {
	b := &bucketService{names: map[string]bool{}}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		defer b.mu.Unlock()
		name := strings.TrimPrefix(r.URL.Path, "/")
		switch r.Method {
		case http.MethodPut:
			b.names[name] = true
		case http.MethodDelete:
			delete(b.names, name)
		default:
			_ = json.NewEncoder(w).Encode(maps.Clone(b.names))
		}
	}))
	return b
}

func (b *bucketService) has(name string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.names[name]
}

var service = newBucketService()

func bucketName(b *Bucket) string { return b.Namespace + "." + b.Name }

func send(ctx context.Context, method, name string) requeue.Outcome {
	req, err := http.NewRequestWithContext(ctx, method, service.URL+"/"+name, nil)
	if err != nil {
		return requeue.Terminal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return requeue.Retry(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return requeue.Retry(fmt.Errorf("%s %s: %s", method, name, resp.Status))
	}
	return requeue.Done()
}

func buckets() *reconcile.Controller[*Bucket] {
	return reconcile.For(&Bucket{}, reconcile.LogicFunc[*Bucket](func(ctx context.Context, b *Bucket, _ reconcile.Scope) requeue.Outcome {
		return send(ctx, http.MethodPut, bucketName(b))
	}), "bucket-operator").
		WithFinalizer(bucketFinalizer, func(ctx context.Context, b *Bucket, _ reconcile.Scope) requeue.Outcome {
			return send(ctx, http.MethodDelete, bucketName(b))
		})
}

func bucket(namespace string) *Bucket {
	return &Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "logs"}}
}

// Shape (f): an owner of a child named by generateName, a ConfigMap of its value found by
// its label.

const batchLabel = "shapes.example.com/batch"

func batches() *reconcile.Controller[*Batch] {
	return reconcile.For(&Batch{}, reconcile.LogicFunc[*Batch](func(ctx context.Context, b *Batch, sc reconcile.Scope) requeue.Outcome {
		var runs corev1.ConfigMapList
		if err := sc.Client.List(ctx, &runs, client.InNamespace(b.Namespace), client.MatchingLabels{batchLabel: b.Name}); err != nil {
			return requeue.Retry(err)
		}
		if len(runs.Items) > 0 {
			run := &runs.Items[0]
			if run.Data["value"] == b.Spec.Value {
				return requeue.Done()
			}
			before := run.DeepCopy()
			run.Data = map[string]string{"value": b.Spec.Value}
			return requeue.FromError(sc.Client.Patch(ctx, run, client.MergeFrom(before)))
		}
		run := batchRun(b.Name, b.Spec.Value)
		run.Namespace = b.Namespace
		if err := controllerutil.SetControllerReference(b, run, sc.Client.Scheme()); err != nil {
			return requeue.Terminal(err)
		}
		// A name is generated: an uncached read first, or a second run could be made
		// before the cache holds the first.
		var live corev1.ConfigMapList
		if err := sc.APIReader.List(ctx, &live, client.InNamespace(b.Namespace), client.MatchingLabels{batchLabel: b.Name}); err != nil {
			return requeue.Retry(err)
		}
		if len(live.Items) > 0 {
			return requeue.After(time.Second) // the cache has not caught up
		}
		return requeue.FromError(sc.Client.Create(ctx, run))
	}), "batch-operator", reconcile.WithChildren(&corev1.ConfigMap{}))
}

func batchRun(name, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-", Labels: map[string]string{batchLabel: name}},
		Data:       map[string]string{"value": value},
	}
}

func batch(namespace, value string) *Batch {
	return &Batch{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "nightly"}, Spec: Spec{Value: value}}
}
