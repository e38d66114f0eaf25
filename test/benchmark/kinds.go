package main

import (
	"context"
	"slices"
	"strings"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	at "github.com/reconcilekit/reconcilekit/examples/at/controller"
	storev1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
	keyval "github.com/reconcilekit/reconcilekit/examples/keyval/controller"
	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	memcached "github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	appsv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	podset "github.com/reconcilekit/reconcilekit/examples/podset/controller"
	"github.com/reconcilekit/reconcilekit/readiness"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/test/benchmark/internal/seed"
)

// A kind is one example operator's resource: what the benchmark creates, what the bare
// pipeline creates in its place, when each counts as done, and the two operators.
type kind struct {
	name string
	// crds is the directory of the kind's CRD, relative to the module root.
	crds        string
	addToScheme func(*runtime.Scheme) error
	// object is a new object of the kind, as a user would create it.
	object func(namespace, name string) client.Object
	// child is the type of what an object owns: a Deployment or a Pod.
	child client.Object
	// bare is the child the bare pipeline creates itself: the one the library-built
	// operator would create, without an owner.
	bare func(namespace, name string) client.Object
	// childDone says the child has done its work: the Deployment is available, the pod
	// has finished.
	childDone func(client.Object) bool
	// statusDone says the object's status reports its child done.
	statusDone func(client.Object) bool
	// watches lists the types both operators watch or list, whose informers a manager
	// starts before its first reconcile, so that the heap of a manager over no object
	// holds them too.
	watches []client.Object
	// ideal is the least API work an operator of the kind does.
	ideal   idealSpec
	library operator
	seed    operator
}

// An operator is how one implementation runs: the library-built one from its declaration,
// as its main makes its manager; the seed-style one as its main sets up kubebuilder's
// default manager, with its controller.
type operator struct {
	// declare returns the library-built controller's declaration, with opts added to the
	// example's own; nil for the seed-style operator.
	declare func(opts ...reconcile.Option) reconcile.Declaration
	// concurrency is how many objects the controller reconciles at a time: the library-built
	// one's declaration is given it (WithConcurrency), the seed-style manager's
	// MaxConcurrentReconciles is; 0 leaves controller-runtime's default of one to the
	// controllers that do not choose.
	concurrency int
	// setup registers the seed-style controller with its manager.
	setup func(ctrl.Manager) error
	// fifo serves the controller's queue first in, first out, not by controller-runtime's
	// priority queue (the default): an experiment.
	fifo bool
}

// spans is where the traced operators' spans go: the OpenTelemetry SDK, batching them to
// an exporter that drops them, so that a run pays what tracing costs the operator and
// not what a collector would.
var spans = sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))

// traced returns op, the library-built operator, tracing each reconcile and write.
func (op operator) traced() operator { return op.with(reconcile.WithTracing(spans)) }

// with returns op, the library-built operator, with more options.
func (op operator) with(more ...reconcile.Option) operator {
	declare := op.declare
	op.declare = func(opts ...reconcile.Option) reconcile.Declaration {
		return declare(append(opts, more...)...)
	}
	return op
}

var kinds = []*kind{
	{
		name:        "Memcached",
		crds:        "examples/memcached/config/crd/bases",
		addToScheme: cachev1beta1.AddToScheme,
		object: func(namespace, name string) client.Object {
			return &cachev1beta1.Memcached{
				ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
				Spec:       cachev1beta1.MemcachedSpec{Replicas: 1, Server: cachev1beta1.MemcachedServer{Port: 11211}},
			}
		},
		child:     &appsv1.Deployment{},
		watches:   []client.Object{&cachev1beta1.Memcached{}, &appsv1.Deployment{}},
		bare:      memcachedDeployment,
		childDone: deploymentAvailable,
		statusDone: func(obj client.Object) bool {
			return meta.IsStatusConditionTrue(obj.(*cachev1beta1.Memcached).Status.Conditions, conditions.Available)
		},
		// The library-built operator creates a Service too, so the ideal does.
		ideal: idealSpec{
			children: func(obj client.Object) []client.Object {
				mc := obj.(*cachev1beta1.Memcached)
				return []client.Object{memcached.Deployment(mc), memcached.Service(mc)}
			},
			progressing: func(obj client.Object, full bool) { idealConditions(obj, false, full) },
			ready: func(_ context.Context, _ client.Reader, obj client.Object, full bool) bool {
				idealConditions(obj, true, full)
				return true
			},
		},
		library: operator{
			declare:     func(opts ...reconcile.Option) reconcile.Declaration { return memcached.New(opts...) },
			concurrency: memcached.Concurrency,
		},
		seed: operator{setup: func(mgr ctrl.Manager) error {
			r := &seed.MemcachedReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Recorder: mgr.GetEventRecorder("memcached-controller")}
			return r.SetupWithManager(mgr)
		}},
	},
	{
		name:        "PodSet",
		crds:        "examples/podset/config/crd/bases",
		addToScheme: appsv1alpha1.AddToScheme,
		object: func(namespace, name string) client.Object {
			return &appsv1alpha1.PodSet{
				ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
				Spec:       appsv1alpha1.PodSetSpec{Size: 1},
			}
		},
		child:     &appsv1.Deployment{},
		watches:   []client.Object{&appsv1alpha1.PodSet{}, &appsv1.Deployment{}, &corev1.Pod{}},
		bare:      podSetDeployment,
		childDone: deploymentAvailable,
		// The seed-style status has the pod names only; the library's adds conditions.
		statusDone: func(obj client.Object) bool {
			ps := obj.(*appsv1alpha1.PodSet)
			return len(ps.Status.PodNames) == int(ps.Spec.Size) &&
				(ps.Status.Conditions == nil || meta.IsStatusConditionTrue(ps.Status.Conditions, conditions.Available))
		},
		ideal: idealSpec{
			children: func(obj client.Object) []client.Object {
				return []client.Object{podset.Deployment(obj.(*appsv1alpha1.PodSet))}
			},
			progressing: func(obj client.Object, full bool) { idealConditions(obj, false, full) },
			ready: func(ctx context.Context, c client.Reader, obj client.Object, full bool) bool {
				ps := obj.(*appsv1alpha1.PodSet)
				var pods corev1.PodList
				if err := c.List(ctx, &pods, client.InNamespace(ps.Namespace), client.MatchingFields{instanceLabel: ps.Name}); err != nil || len(pods.Items) != int(ps.Spec.Size) {
					return false // a pod the cache has yet to see brings the PodSet back
				}
				ps.Status.PodNames = nil
				for _, p := range pods.Items {
					ps.Status.PodNames = append(ps.Status.PodNames, p.Name)
				}
				slices.Sort(ps.Status.PodNames)
				ps.Status.ReadyReplicas = ps.Spec.Size
				idealConditions(obj, true, full)
				return true
			},
			watches: []client.Object{&corev1.Pod{}},
			// The pods of a PodSet are found by its name, not by matching every pod.
			index: func(ctx context.Context, c cache.Cache) error {
				return c.IndexField(ctx, &corev1.Pod{}, instanceLabel, func(pod client.Object) []string {
					return []string{pod.GetLabels()[instanceLabel]}
				})
			},
		},
		library: operator{
			declare:     func(opts ...reconcile.Option) reconcile.Declaration { return podset.New(opts...) },
			concurrency: podset.Concurrency,
		},
		seed: operator{setup: func(mgr ctrl.Manager) error {
			return (&seed.PodSetReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme()}).SetupWithManager(mgr)
		}},
	},
	{
		name:        "At",
		crds:        "examples/at/config/crd/bases",
		addToScheme: cnatv1alpha1.AddToScheme,
		object: func(namespace, name string) client.Object {
			return &cnatv1alpha1.At{
				ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
				// Due at once: the benchmark measures the operator, not the clock.
				Spec: cnatv1alpha1.AtSpec{Schedule: time.Now().UTC().Format("2006-01-02T15:04:05Z"), Command: "echo YAY"},
			}
		},
		child:     &corev1.Pod{},
		watches:   []client.Object{&cnatv1alpha1.At{}, &corev1.Pod{}},
		bare:      commandPod,
		childDone: podFinished,
		statusDone: func(obj client.Object) bool {
			return obj.(*cnatv1alpha1.At).Status.Phase == cnatv1alpha1.PhaseDone
		},
		ideal: idealSpec{
			children: func(obj client.Object) []client.Object { return []client.Object{at.CommandPod(obj.(*cnatv1alpha1.At))} },
			progressing: func(obj client.Object, full bool) {
				a := obj.(*cnatv1alpha1.At)
				a.Status.Phase, a.Status.PodName = cnatv1alpha1.PhaseRunning, a.Name
				if full {
					running := "phase " + cnatv1alpha1.PhaseRunning
					setConditions(a, false,
						metav1.Condition{Type: conditions.Ready, Status: metav1.ConditionFalse, Reason: "Running", Message: running},
						metav1.Condition{Type: conditions.Reconciling, Status: metav1.ConditionTrue, Reason: "Running", Message: running})
				}
			},
			// The least status: the phase says it all, as the seed's status does.
			ready: func(_ context.Context, _ client.Reader, obj client.Object, full bool) bool {
				a := obj.(*cnatv1alpha1.At)
				a.Status.Phase = cnatv1alpha1.PhaseDone
				if full {
					a.Status.ExitCode = new(int32(0)) // the benchmark's command always succeeds
					setConditions(a, true,
						metav1.Condition{Type: at.Succeeded, Status: metav1.ConditionTrue, Reason: "CommandSucceeded", Message: "the command succeeded"},
						metav1.Condition{Type: conditions.Ready, Status: metav1.ConditionTrue, Reason: reconcile.ReasonReconciled})
				}
				return true
			},
		},
		library: operator{
			declare:     func(opts ...reconcile.Option) reconcile.Declaration { return at.New(opts...) },
			concurrency: at.Concurrency,
		},
		seed: operator{setup: func(mgr ctrl.Manager) error {
			return (&seed.AtReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme()}).SetupWithManager(mgr)
		}},
	},
	{
		name:        "Keyval",
		crds:        "examples/keyval/config/crd/bases",
		addToScheme: storev1alpha1.AddToScheme,
		object: func(namespace, name string) client.Object {
			return &storev1alpha1.Keyval{
				ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
				Spec:       storev1alpha1.KeyvalSpec{Replicas: 1},
			}
		},
		child:     &appsv1.StatefulSet{},
		watches:   []client.Object{&storev1alpha1.Keyval{}, &appsv1.StatefulSet{}},
		bare:      keyvalStatefulSet,
		childDone: statefulSetReady,
		statusDone: func(obj client.Object) bool {
			return meta.IsStatusConditionTrue(obj.(*storev1alpha1.Keyval).Status.Conditions, conditions.Available)
		},
		// The library-built operator creates a ConfigMap, two Services and a
		// PodDisruptionBudget too, so the ideal does.
		ideal: idealSpec{
			children: func(obj client.Object) []client.Object {
				kv := obj.(*storev1alpha1.Keyval)
				config := keyval.ConfigMap(kv)
				sts, err := keyval.StatefulSet(kv, config)
				if err != nil {
					panic(err) // a ConfigMap of strings always hashes
				}
				return []client.Object{config, keyval.PodDisruptionBudget(kv), keyval.HeadlessService(kv), keyval.Service(kv), sts}
			},
			progressing: func(obj client.Object, full bool) {
				if !full {
					idealConditions(obj, false, false)
					return
				}
				// What the library-built operator reports of a StatefulSet just created.
				kv := obj.(*storev1alpha1.Keyval)
				sts, _ := keyval.StatefulSet(kv, keyval.ConfigMap(kv))
				keyvalStatus(kv, sts)
			},
			ready: func(ctx context.Context, c client.Reader, obj client.Object, full bool) bool {
				kv := obj.(*storev1alpha1.Keyval)
				if !full {
					idealConditions(obj, true, false)
					return true
				}
				var sts appsv1.StatefulSet
				if err := c.Get(ctx, client.ObjectKeyFromObject(kv), &sts); err != nil || !statefulSetReady(&sts) {
					return false
				}
				keyvalStatus(kv, &sts)
				return true
			},
			finalizer: keyval.Finalizer,
		},
		library: operator{
			declare:     func(opts ...reconcile.Option) reconcile.Declaration { return keyval.New(opts...) },
			concurrency: keyval.Concurrency,
		},
		// No seed: there is no seed-style Keyval to measure it against. The peers' run
		// as processes (peer.go), as for the other kinds.
	},
}

// has says whether k can be measured with impl: a kind with no seed-style operator (the
// Keyval, which no seed has) is not measured seed-style, nor one the peer binary does not
// run as a process.
func (k *kind) has(impl string) bool {
	switch {
	case impl == seeded:
		return k.seed.setup != nil
	case isProcess(impl):
		return peerKinds[k.name] != ""
	}
	return true
}

// kindNamed returns the kind with the name, in any case, or nil.
func kindNamed(name string) *kind {
	for _, k := range kinds {
		if strings.EqualFold(k.name, name) {
			return k
		}
	}
	return nil
}

// idealConditions sets the one condition the ideal pipeline reports, Available, and the
// generation it describes; with full, the conditions of a size-1 object as the
// library-built operators report them, in progress and done.
func idealConditions(obj client.Object, available, full bool) {
	set := []metav1.Condition{{Type: conditions.Available, Status: metav1.ConditionFalse, Reason: "RollingOut"}}
	if available {
		set[0].Status, set[0].Reason = metav1.ConditionTrue, "RolloutComplete"
	}
	if full {
		set = standardConditions(available)
	}
	setConditions(obj, available, set...)
}

// setConditions sets obj's conditions, each of its generation, and its observedGeneration;
// once done it removes Reconciling.
func setConditions(obj client.Object, done bool, set ...metav1.Condition) {
	setter := obj.(conditions.Setter)
	conds := setter.GetConditions()
	if done {
		meta.RemoveStatusCondition(&conds, conditions.Reconciling)
	}
	for _, c := range set {
		c.ObservedGeneration = obj.GetGeneration()
		meta.SetStatusCondition(&conds, c)
	}
	setter.SetConditions(conds)
	obj.(interface{ SetObservedGeneration(int64) }).SetObservedGeneration(obj.GetGeneration())
}

// standardConditions are the conditions of a size-1 Memcached or PodSet
// as the library-built operators write them, in progress or done.
func standardConditions(available bool) []metav1.Condition {
	if available {
		return []metav1.Condition{
			{Type: conditions.Available, Status: metav1.ConditionTrue, Reason: "MinimumReplicasAvailable", Message: "minimum availability: 1 of 1 replicas available"},
			{Type: conditions.Progressing, Status: metav1.ConditionFalse, Reason: "RolloutComplete", Message: "1 of 1 replicas available"},
			{Type: conditions.Degraded, Status: metav1.ConditionFalse, Reason: "RolloutComplete", Message: "1 of 1 replicas available"},
			{Type: conditions.Ready, Status: metav1.ConditionTrue, Reason: reconcile.ReasonReconciled},
		}
	}
	rolling := "0 of 1 replicas available"
	return []metav1.Condition{
		{Type: conditions.Available, Status: metav1.ConditionFalse, Reason: "AvailabilityNotReported", Message: "the Deployment has not reported its availability yet"},
		{Type: conditions.Progressing, Status: metav1.ConditionTrue, Reason: "RollingOut", Message: rolling},
		{Type: conditions.Degraded, Status: metav1.ConditionFalse, Reason: "RollingOut", Message: rolling},
		{Type: conditions.Ready, Status: metav1.ConditionFalse, Reason: "RollingOut", Message: rolling},
		{Type: conditions.Reconciling, Status: metav1.ConditionTrue, Reason: "RollingOut", Message: rolling},
	}
}

func deploymentAvailable(obj client.Object) bool {
	return readiness.Deployment(obj.(*appsv1.Deployment)).Rollout == readiness.RolloutComplete
}

func statefulSetReady(obj client.Object) bool {
	return readiness.StatefulSet(obj.(*appsv1.StatefulSet), nil).Rollout == readiness.RolloutComplete
}

// keyvalStatus sets kv's status from sts as the library-built Keyval operator reports it:
// the StatefulSet's scale and readiness, and Ready and Reconciling as the shell derives them.
func keyvalStatus(kv *storev1alpha1.Keyval, sts *appsv1.StatefulSet) {
	scale := readiness.StatefulSetScale(sts)
	kv.Status.Replicas, kv.Status.ReadyReplicas, kv.Status.Selector = scale.Replicas, scale.ReadyReplicas, scale.Selector
	r := readiness.StatefulSet(sts, nil)
	r.Mark(kv)
	done := r.Rollout == readiness.RolloutComplete
	if done {
		setConditions(kv, true, metav1.Condition{Type: conditions.Ready, Status: metav1.ConditionTrue, Reason: reconcile.ReasonReconciled})
		return
	}
	setConditions(kv, false,
		metav1.Condition{Type: conditions.Ready, Status: metav1.ConditionFalse, Reason: r.Reason, Message: r.Message},
		metav1.Condition{Type: conditions.Reconciling, Status: metav1.ConditionTrue, Reason: r.Reason, Message: r.Message})
}

func podFinished(obj client.Object) bool {
	phase := obj.(*corev1.Pod).Status.Phase
	return phase == corev1.PodSucceeded || phase == corev1.PodFailed
}

// memcachedDeployment is the Deployment the library-built Memcached operator creates for
// a Memcached of size 1, without the owner.
func memcachedDeployment(namespace, name string) client.Object {
	return memcached.Deployment(&cachev1beta1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: cachev1beta1.MemcachedSpec{Replicas: 1, Server: cachev1beta1.MemcachedServer{Port: 11211}}})
}

// podSetDeployment is the Deployment the library-built PodSet operator creates for a
// PodSet of size 1, without the owner.
func podSetDeployment(namespace, name string) client.Object {
	return podset.Deployment(&appsv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: appsv1alpha1.PodSetSpec{Size: 1}})
}

// keyvalStatefulSet is the StatefulSet the library-built Keyval operator creates for a
// Keyval of one server, without the owner.
func keyvalStatefulSet(namespace, name string) client.Object {
	kv := &storev1alpha1.Keyval{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Spec: storev1alpha1.KeyvalSpec{Replicas: 1}}
	sts, err := keyval.StatefulSet(kv, keyval.ConfigMap(kv))
	if err != nil {
		panic(err) // a ConfigMap of strings always hashes
	}
	return sts
}

// commandPod is the pod the library-built At operator creates to run "echo YAY", without
// the owner.
func commandPod(namespace, name string) client.Object {
	return at.CommandPod(&cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: cnatv1alpha1.AtSpec{Command: "echo YAY"}})
}

// idealWrites is how many writes the ideal pipeline makes for one object: its children's
// creates and two status writes, and with full its finalizer's patch.
func (k *kind) idealWrites(full bool) float64 {
	writes := len(k.ideal.children(k.object(namespace, "any"))) + 2
	if k.ideal.finalizerOf(full) != "" {
		writes++
	}
	return float64(writes)
}
