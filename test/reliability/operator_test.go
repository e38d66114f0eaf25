package reliability

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/reconcilekit/reconcilekit/conditions"
	atv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	at "github.com/reconcilekit/reconcilekit/examples/at/controller"
	keyvalv1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
	keyval "github.com/reconcilekit/reconcilekit/examples/keyval/controller"
	memcachedv1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	memcached "github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	podsetv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	podset "github.com/reconcilekit/reconcilekit/examples/podset/controller"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// operator is one of the example operators as the scenarios drive it: its controller's
// declaration, its generated role, and what its objects look like once they have converged.
type operator struct {
	name string // its directory under examples/ and its controller's name
	// controller is the declaration its cmd/main.go makes its manager from: its watches,
	// and what its manager caches.
	controller reconcile.Declaration
	// child is the resource of what it creates for each object, as RBAC names it.
	child string

	// object returns the i-th sample object of the operator's kind.
	object func(ns, name string, i int) client.Object
	// empty returns an object of the operator's kind to read into.
	empty func() client.Object
	// resize changes an object's size as a user would, so that the operator must update
	// what it made; nil for a kind without one.
	resize func(client.Object)
	// unconverged describes the objects of ns that have not converged yet.
	unconverged func(ctx context.Context, c client.Client, ns string) ([]string, error)
	// regressed describes how an object's status went backwards from old to new, or is
	// empty if it did not.
	regressed func(old, new client.Object) string

	// role is the ClusterRole generated from its RBAC markers, installed by install.
	role rbacv1.ClusterRole
}

var (
	memcachedOperator = &operator{
		name:       "memcached",
		controller: memcached.New(),
		child:      "deployments",
		object: func(ns, name string, i int) client.Object {
			return &memcachedv1beta1.Memcached{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec:       memcachedv1beta1.MemcachedSpec{Replicas: 1 + int32(i%3)},
			}
		},
		empty: func() client.Object { return &memcachedv1beta1.Memcached{} },
		resize: func(obj client.Object) {
			mc := obj.(*memcachedv1beta1.Memcached)
			mc.Spec.Replicas = mc.Spec.Replicas%3 + 1
			// A new port changes the Service too, so that patching it is put to use.
			mc.Spec.Server.Port = 11211 + 11212 - max(mc.Spec.Server.Port, 11211)
		},
		unconverged: memcachedsUnconverged,
		regressed:   availabilityRegressed,
	}
	podsetOperator = &operator{
		name:       "podset",
		controller: podset.New(),
		child:      "deployments",
		object: func(ns, name string, i int) client.Object {
			return &podsetv1alpha1.PodSet{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec:       podsetv1alpha1.PodSetSpec{Size: 1 + int32(i%3)},
			}
		},
		empty: func() client.Object { return &podsetv1alpha1.PodSet{} },
		resize: func(obj client.Object) {
			ps := obj.(*podsetv1alpha1.PodSet)
			ps.Spec.Size = ps.Spec.Size%3 + 1
		},
		unconverged: podsetsUnconverged,
		regressed:   availabilityRegressed,
	}
	atOperator = &operator{
		name:       "at",
		controller: at.New(),
		child:      "pods",
		object: func(ns, name string, i int) client.Object {
			// Due within a few seconds, so that commands start while the scenario is
			// under way, not all at once.
			return newAt(ns, name, time.Now().Add(time.Duration(i%5)*time.Second))
		},
		empty:       func() client.Object { return &atv1alpha1.At{} },
		unconverged: atsUnconverged,
		regressed:   phaseRegressed,
	}

	// operators are the three, in the order the scenarios go through them.
	operators = []*operator{memcachedOperator, podsetOperator, atOperator}

	// keyvalOperator, the stateful one, has scenarios of its own: its servers keep volumes,
	// and a deleted Keyval waits for its finalizer.
	keyvalOperator = &operator{
		name:       "keyval",
		controller: keyval.New(),
		child:      "statefulsets",
		object: func(ns, name string, i int) client.Object {
			// Every other one takes its volumes with it when deleted.
			when := keyvalv1alpha1.Retain
			if i%2 == 1 {
				when = keyvalv1alpha1.Delete
			}
			return &keyvalv1alpha1.Keyval{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: keyvalv1alpha1.KeyvalSpec{Replicas: 1 + int32(i%3),
					Config: map[string]string{"maxmemory": "64mb"}, Storage: keyvalv1alpha1.KeyvalStorage{WhenDeleted: when}},
			}
		},
		empty: func() client.Object { return &keyvalv1alpha1.Keyval{} },
		resize: func(obj client.Object) {
			kv := obj.(*keyvalv1alpha1.Keyval)
			kv.Spec.Replicas = kv.Spec.Replicas%3 + 1
			// A new configuration rolls the servers too.
			kv.Spec.Config = map[string]string{"maxmemory": fmt.Sprintf("%dmb", 64*kv.Spec.Replicas)}
		},
		unconverged: keyvalsUnconverged,
		regressed:   availabilityRegressed,
	}
)

func newAt(ns, name string, when time.Time) *atv1alpha1.At {
	return &atv1alpha1.At{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       atv1alpha1.AtSpec{Schedule: when.UTC().Format(time.RFC3339), Command: "echo hello"},
	}
}

// install reads the operator's generated role and creates it under a name of its own:
// controller-gen names every operator's role manager-role.
func (op *operator) install(ctx context.Context) error {
	path := filepath.Join("..", "..", "examples", op.name, "config", "rbac", "role.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(data, &op.role); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	op.role.Name = op.name + "-manager-role"
	admin, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	return admin.Create(ctx, op.role.DeepCopy())
}

// user is the name the operator authenticates as.
func (op *operator) user() string { return op.name + "-operator" }

// config returns a config for the operator's user, bound to its generated role alone.
func (op *operator) config(t *testing.T) *rest.Config {
	return cp.ConfigFor(t, op.user(), op.role.Name)
}

// start runs the operator's manager as its cmd/main.go makes it, from its declaration
// (which derives the cache's restrictions and compaction), but with the cache limited to
// namespace ns, so that scenarios sharing the cluster stay out of each other's way. Each
// option changes the manager's options further.
func (op *operator) start(t *testing.T, cfg *rest.Config, ns string, options ...func(*manager.Options)) *reconciletest.Manager {
	t.Helper()
	opts := manager.Options{
		Scheme: scheme,
		Cache:  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	}
	for _, o := range options {
		o(&opts)
	}
	return reconciletest.StartManager(t, cfg, reconcile.Manager{Options: opts, Controllers: []reconcile.Declaration{op.controller}})
}

// create creates n sample objects named prefix-0, prefix-1, ... in ns.
func (op *operator) create(t *testing.T, c client.Client, ns, prefix string, n int) {
	t.Helper()
	for i := range n {
		if err := c.Create(t.Context(), op.object(ns, fmt.Sprintf("%s-%d", prefix, i), i)); err != nil {
			t.Fatalf("creating a %s: %v", op.name, err)
		}
	}
}

// resizeNamed gives the named objects of op's kind in ns a new size, with a patch
// whatever changed in the meantime; it does nothing for a kind without a size.
func (op *operator) resizeNamed(t *testing.T, c client.Client, ns string, names ...string) {
	t.Helper()
	if op.resize == nil {
		return
	}
	for _, name := range names {
		obj := op.empty()
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			t.Fatal(err)
		}
		before := obj.DeepCopyObject().(client.Object)
		op.resize(obj)
		if err := c.Patch(t.Context(), obj, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
	}
}

func memcachedsUnconverged(ctx context.Context, c client.Client, ns string) ([]string, error) {
	var list memcachedv1beta1.MemcachedList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	deployments, err := deploymentsIn(ctx, c, ns)
	if err != nil {
		return nil, err
	}
	var pending []string
	for _, mc := range list.Items {
		if why := deploymentUnconverged(&mc, mc.Status.ObservedGeneration, mc.Spec.Replicas, deployments[mc.Name]); why != "" {
			pending = append(pending, mc.Name+": "+why)
		}
	}
	return pending, nil
}

func podsetsUnconverged(ctx context.Context, c client.Client, ns string) ([]string, error) {
	var list podsetv1alpha1.PodSetList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	deployments, err := deploymentsIn(ctx, c, ns)
	if err != nil {
		return nil, err
	}
	var pending []string
	for _, ps := range list.Items {
		why := deploymentUnconverged(&ps, ps.Status.ObservedGeneration, ps.Spec.Size, deployments[ps.Name])
		if why == "" && (ps.Status.ReadyReplicas != ps.Spec.Size || len(ps.Status.PodNames) != int(ps.Spec.Size)) {
			why = fmt.Sprintf("status lists %d pods, %d ready", len(ps.Status.PodNames), ps.Status.ReadyReplicas)
		}
		if why != "" {
			pending = append(pending, ps.Name+": "+why)
		}
	}
	return pending, nil
}

func deploymentsIn(ctx context.Context, c client.Client, ns string) (map[string]*appsv1.Deployment, error) {
	var list appsv1.DeploymentList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	byName := make(map[string]*appsv1.Deployment, len(list.Items))
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	return byName, nil
}

// deploymentUnconverged says why an owner of a Deployment of size replicas has not
// converged: its status must describe its spec and say Available, and its Deployment
// must be its own and have every replica available.
func deploymentUnconverged(owner interface {
	client.Object
	conditions.Getter
}, observed int64, size int32, dep *appsv1.Deployment) string {
	switch available := conditions.Find(owner, conditions.Available); {
	case observed != owner.GetGeneration():
		return fmt.Sprintf("status describes generation %d of %d", observed, owner.GetGeneration())
	case available == nil || available.Status != metav1.ConditionTrue:
		return fmt.Sprintf("not Available: %v", available)
	case dep == nil:
		return "no Deployment"
	case !ownership.IsControlledBy(dep, owner):
		return "its Deployment is not its own"
	case *dep.Spec.Replicas != size || dep.Status.AvailableReplicas != size:
		return fmt.Sprintf("Deployment has %d of %d replicas available", dep.Status.AvailableReplicas, size)
	}
	return ""
}

// keyvalsUnconverged says which Keyvals of ns are not Ready for their generation with
// every server ready, each with a bound claim.
func keyvalsUnconverged(ctx context.Context, c client.Client, ns string) ([]string, error) {
	var list keyvalv1alpha1.KeyvalList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var claims corev1.PersistentVolumeClaimList
	if err := c.List(ctx, &claims, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	bound := map[string]int{}
	for _, claim := range claims.Items {
		if claim.Status.Phase == corev1.ClaimBound {
			bound[claim.Labels["app.kubernetes.io/instance"]]++
		}
	}
	var pending []string
	for _, kv := range list.Items {
		switch {
		case kv.Status.ObservedGeneration != kv.Generation:
			pending = append(pending, fmt.Sprintf("%s: status describes generation %d of %d", kv.Name, kv.Status.ObservedGeneration, kv.Generation))
		case !conditions.IsTrue(&kv, conditions.Ready) || kv.Status.ReadyReplicas != kv.Spec.Replicas:
			pending = append(pending, fmt.Sprintf("%s: %d of %d ready, %v", kv.Name, kv.Status.ReadyReplicas, kv.Spec.Replicas, conditions.Find(&kv, conditions.Ready)))
		case bound[kv.Name] < int(kv.Spec.Replicas):
			pending = append(pending, fmt.Sprintf("%s: %d claims bound for %d servers", kv.Name, bound[kv.Name], kv.Spec.Replicas))
		}
	}
	return pending, nil
}

func atsUnconverged(ctx context.Context, c client.Client, ns string) ([]string, error) {
	var list atv1alpha1.AtList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var pending []string
	for _, a := range list.Items {
		switch succeeded := conditions.Find(&a, at.Succeeded); {
		case a.Status.Phase != atv1alpha1.PhaseDone:
			pending = append(pending, fmt.Sprintf("%s: phase %q", a.Name, a.Status.Phase))
		case succeeded == nil || succeeded.Status != metav1.ConditionTrue || a.Status.PodName != a.Name:
			pending = append(pending, fmt.Sprintf("%s: done with pod %q, but %v", a.Name, a.Status.PodName, succeeded))
		}
	}
	return pending, nil
}

// availabilityRegressed reports an owner of a Deployment whose status went back to an
// older generation, or stopped saying Available for the same generation.
func availabilityRegressed(old, new client.Object) string {
	o, n := old.(conditions.Getter), new.(conditions.Getter)
	switch before, after := observedGeneration(old), observedGeneration(new); {
	case after < before:
		return fmt.Sprintf("observedGeneration went from %d back to %d", before, after)
	case after == before && conditions.IsTrue(o, conditions.Available) && !conditions.IsTrue(n, conditions.Available):
		return fmt.Sprintf("Available went from True to %v for the same generation %d", conditions.Find(n, conditions.Available), after)
	}
	return ""
}

func observedGeneration(obj client.Object) int64 {
	return obj.(interface{ GetObservedGeneration() int64 }).GetObservedGeneration()
}

// phases ranks an At's phases in the only order it may go through them.
var phases = map[string]int{"": 0, atv1alpha1.PhasePending: 1, atv1alpha1.PhaseRunning: 2, atv1alpha1.PhaseDone: 3}

// phaseRegressed reports an At whose phase went backwards or whose recorded pod changed.
func phaseRegressed(old, new client.Object) string {
	o, n := old.(*atv1alpha1.At), new.(*atv1alpha1.At)
	switch {
	case phases[n.Status.Phase] < phases[o.Status.Phase]:
		return fmt.Sprintf("phase went from %s back to %s", o.Status.Phase, n.Status.Phase)
	case o.Status.PodName != "" && n.Status.PodName != o.Status.PodName:
		return fmt.Sprintf("pod changed from %q to %q", o.Status.PodName, n.Status.PodName)
	}
	return ""
}

// converged returns nil once every object of every operator in ns has converged.
func converged(ctx context.Context, c client.Client, ns string, ops ...*operator) error {
	var pending []string
	for _, op := range ops {
		p, err := op.unconverged(ctx, c, ns)
		if err != nil {
			return err
		}
		if len(p) > 0 {
			// A few laggards of each kind, so that a timeout says where to look.
			pending = append(pending, fmt.Sprintf("%d %s objects, among them %s", len(p), op.name, strings.Join(p[:min(3, len(p))], "; ")))
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("not converged: %s", strings.Join(pending, "; "))
	}
	return nil
}

// pods lists the pods in ns.
func pods(ctx context.Context, c client.Client, ns string) ([]corev1.Pod, error) {
	var list corev1.PodList
	err := c.List(ctx, &list, client.InNamespace(ns))
	return list.Items, err
}
