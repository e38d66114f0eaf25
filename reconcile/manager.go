package reconcile

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/webhook"
)

// Declaration is a Controller of any kind, as a Manager takes it. Only Controller
// implements it.
type Declaration interface {
	// Object returns an empty object of the reconciled kind.
	Object() client.Object
	// Children returns an empty object of each kind the controller owns.
	Children() []client.Object
	// Optional returns an empty object of each kind whose CRD may be absent (WithOptional).
	Optional() []client.Object
	// Reconciler returns the controller's shell without a manager, reading and writing
	// through c, with opts added to the declaration's.
	Reconciler(c client.Client, opts ...Option) rtreconcile.Reconciler

	kind() string
	kinds() []client.Object
	options() options
	cacheRules() []cacheRule
	webhooks(scheme *runtime.Scheme) (served, error)
	setup(mgr manager.Manager, gate Gate, crds *crdGate, metrics bool) error
}

// Manager makes a controller-runtime manager from controller declarations. Its cache and
// its controllers are fixed when it is made, and both follow from the declarations, so the
// declarations come first and the manager is made from them, in one step:
//
//	mgr, err := reconcile.Manager{Options: options, Controllers: []reconcile.Declaration{controller.New()}}.New(cfg)
//
// New adds to Options what the declarations say:
//   - the cache's restrictions of each kind (WithCache); for each kind a declaration owns
//     (WithChildren) and none reads otherwise, the children alone, by the label the Writer
//     gives them (ownership.OwnedByLabel; WithCacheAll says why a kind would be cached in
//     full, and which kinds are), with the labelling, once on the leader as the manager
//     starts, of the children made without it; and, unless Options set a
//     DefaultTransform, a transform of the declared kinds alone that drops managedFields and
//     shares equal label maps (ownership.TransformCompact): a kind no declaration names, such
//     as one a plain controller-runtime controller of the same manager reconciles, is cached
//     as controller-runtime caches it, managedFields kept; a declared kind is compacted for
//     every reader of the cache;
//   - clients that ask the API server for no compression, unless Compression;
//   - a readiness check, "controllers" (ControllersCheck), that fails until every declared
//     kind's cache has synced and the controllers have started, served at
//     Options.HealthProbeBindAddress by controller-runtime's probe server, which answers a
//     failing check with 500 (the kubelet reads any status from 400 as not ready). No
//     liveness check of the library's: the liveness endpoint answers 200 while the process
//     serves it. The names kubebuilder's scaffold gives its own checks, "healthz" and
//     "readyz", stay the project's: its main adds them, after New, unedited. Checks added
//     with AddReadyzCheck and AddHealthzCheck before Start are served beside the library's
//     (a check of a name already added replaces it, controller-runtime's rule: leave
//     "controllers" and "webhooks" to the library);
//   - the library's metrics, on controller-runtime's registry, unless NoMetrics;
//   - the declared webhooks (WithDefaulter, WithValidator, WithConversion), on the
//     manager's webhook server, at the paths Webhooks lists; a manager that declares none
//     has no webhook server; a readiness check, "webhooks" (WebhooksCheck), that fails until the server
//     answers TLS (with a certificate); and Certificates, if set, as the server's
//     certificate.
//   - the storage migration of each kind declared WithStorageMigration, run on the
//     leader as the manager starts.
//
// It refuses, naming the fix: no declaration, two of one kind, a kind the scheme does not
// know, a kind the client may not cache (Options.Client.Cache.DisableFor), two restrictions
// of one kind that differ, and a declaration that cannot run.
//
// A kind declared optional (WithOptional) is watched, cached and counted by the readiness
// check only while its CustomResourceDefinition is established: New adds a watch of CRDs
// that starts and stops it, and refuses a kind optional for one controller and required by
// another.
type Manager struct {
	// Options are the manager's options, as for ctrl.NewManager. Scheme must know every
	// declared kind; client-go's scheme if nil.
	Options ctrl.Options

	// Controllers are the declarations of the manager's controllers, one for each kind.
	Controllers []Declaration

	// Gate, if set, decides which objects this process reconciles: package sharding sets
	// it (sharding.Shard.Configure).
	Gate Gate

	// NoMetrics leaves the library's metrics out: nothing is registered.
	// controller-runtime's own metrics follow Options.Metrics.
	NoMetrics bool

	// Compression lets the API server compress (gzip) what it sends the manager's
	// clients. Off unless set, as kube-controller-manager and kube-scheduler have it: an
	// operator runs beside its API server, where compressing costs CPU at both ends and
	// saves little, and since Kubernetes 1.37 the server compresses every event of an
	// informer's watch, not only large lists (WatchListCompression). Set it for a manager
	// that reaches its API server over a slow link. A cfg with DisableCompression set
	// stays so.
	Compression bool

	// Certificates, if set, makes and rotates the webhook server's certificate and puts
	// its authority into the operator's webhook configurations and CRDs: the webhook server
	// is then Options.WebhookServer, which must be nil or a webhook.DefaultServer, serving
	// Certificates.GetCertificate. Nil: the server reads its certificate from its CertDir,
	// as one cert-manager writes.
	Certificates *webhook.Certificates
}

// The readiness checks a Manager adds, served at /readyz and, each with its reason, at
// /readyz/<name>. A project's own checks take any other name; kubebuilder's scaffold names
// its "healthz" and "readyz".
const (
	// ControllersCheck fails until the informer of every declared kind has synced and the
	// controllers have started, naming the kinds still listing. Setup, which adds one
	// controller at a time, adds a check for each instead (SetupCheck says why).
	ControllersCheck = "controllers"
	// WebhooksCheck fails until the webhook server answers TLS; a Manager adds it when its
	// declarations serve webhooks.
	WebhooksCheck = "webhooks"
)

// New makes the manager, with every declared controller added, from cfg.
func (m Manager) New(cfg *rest.Config) (manager.Manager, error) {
	opts := m.Options
	if opts.Scheme == nil {
		opts.Scheme = clientgoscheme.Scheme // as controller-runtime does
	}
	if err := m.check(opts.Scheme, opts.Client.Cache); err != nil {
		return nil, err
	}
	hooks, err := m.webhooks(opts.Scheme)
	if err != nil {
		return nil, err
	}
	if m.Certificates != nil {
		if err := serveWith(&opts, m.Certificates); err != nil {
			return nil, err
		}
	}
	owned := ownedKinds(m.Controllers, opts.Scheme)
	byObject, err := m.cacheByObject(owned)
	if err != nil {
		return nil, err
	}
	opts.Cache.ByObject = byObject
	opts.MapperProvider = optionalMapper(m.Controllers, opts.Scheme, opts.MapperProvider) // WithOptional
	if opts.Cache.DefaultTransform == nil {
		opts.Cache.DefaultTransform = declaredOnly(ownership.TransformCompact(), m.Controllers, opts.Scheme)
	}
	if !m.Compression && !cfg.DisableCompression {
		cfg = rest.CopyConfig(cfg)
		cfg.DisableCompression = true
	}
	built, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("reconcile: making the manager: %w", err)
	}
	var kinds []client.Object
	crds := newCRDGate(built, !m.NoMetrics) // the optional kinds' (WithOptional)
	for _, d := range m.Controllers {
		if err := d.setup(built, m.Gate, crds, !m.NoMetrics); err != nil {
			return nil, err
		}
		kinds = append(kinds, crds.gated(d.kinds())...)
	}
	if slices.ContainsFunc(hooks, func(s served) bool { return len(s.endpoints) > 0 }) {
		if err := serveWebhooks(built.GetWebhookServer(), built.GetScheme(), hooks); err != nil {
			return nil, err
		}
		// Ready once the server answers TLS, so with a certificate: a replica is not sent
		// admissions it cannot answer.
		if err := built.AddReadyzCheck(WebhooksCheck, built.GetWebhookServer().StartedChecker()); err != nil {
			return nil, err
		}
	}
	if err := addAdopter(built, opts.Cache, owned); err != nil {
		return nil, err
	}
	if m.Certificates != nil {
		if err := m.Certificates.SetupWithManager(built); err != nil {
			return nil, err
		}
	}
	if err := built.AddReadyzCheck(ControllersCheck, readyCheck(built.GetCache(), built.GetScheme(), kinds, started(built, opts.LeaderElection))); err != nil {
		return nil, err
	}
	return built, nil
}

// started returns whether mgr has started its controllers: once it leads, or at once
// without leader election. A replica standing by for the lease counts as started, or a
// rolling update that waits for the new replica to be ready while the old one keeps the
// lease would never end.
func started(mgr manager.Manager, leaderElection bool) func() bool {
	elected := mgr.Elected()
	return func() bool {
		if leaderElection {
			return true
		}
		select {
		case <-elected:
			return true
		default:
			return false
		}
	}
}

// check refuses declarations that cannot be wired together.
func (m Manager) check(scheme *runtime.Scheme, uncached *client.CacheOptions) error {
	if len(m.Controllers) == 0 {
		return errors.New("reconcile: a Manager needs at least one controller declaration (reconcile.For)")
	}
	seen := map[reflect.Type]bool{}
	var errs []error
	for _, d := range m.Controllers {
		t := reflect.TypeOf(d.Object())
		if seen[t] {
			errs = append(errs, fmt.Errorf("reconcile: two controllers declared for %s in one manager: each object must have one controller; declare it once", d.kind()))
		}
		seen[t] = true
		for _, kind := range d.kinds() {
			if _, err := apiutil.GVKForObject(kind, scheme); err != nil {
				errs = append(errs, fmt.Errorf("reconcile: the %s controller declares %s, which the manager's scheme does not know: add its AddToScheme to Options.Scheme", d.kind(), goName(kind)))
				continue
			}
			if uncached == nil {
				continue
			}
			for _, off := range uncached.DisableFor {
				if reflect.TypeOf(off) == reflect.TypeOf(kind) {
					errs = append(errs, fmt.Errorf("reconcile: the %s controller watches %s, which Options.Client.Cache.DisableFor reads uncached: a watched kind is cached; remove it from DisableFor", d.kind(), goName(kind)))
				}
			}
		}
	}
	errs = append(errs, optionalAgree(m.Controllers))
	return errors.Join(errs...)
}

// cacheByObject returns the cache's restrictions by kind: the declarations' (WithCache,
// WithCacheAll), which must agree among themselves, and for the child kinds none of them
// names, owned, the label of the children (ownership.OwnedByLabel); each narrowed by the one
// Options already has for its kind, such as the shard label package sharding adds: both
// hold.
func (m Manager) cacheByObject(owned []ownedKind) (map[client.Object]cache.ByObject, error) {
	declared := map[client.Object]cache.ByObject{}
	for _, d := range m.Controllers {
		for _, rule := range d.cacheRules() {
			key, existing, ok := findByObject(declared, rule.kind)
			if ok && !reflect.DeepEqual(existing, rule.by) {
				return nil, fmt.Errorf("reconcile: the cache of %T is restricted twice, differently (by the %s controller's WithCache or WithCacheAll and another's): one manager has one cache of a kind; make the restrictions agree",
					rule.kind, d.kind())
			}
			declared[key] = rule.by
		}
	}
	for _, k := range owned { // none of them is declared (ownedKinds)
		declared[k.kind] = cache.ByObject{Label: k.selector()}
	}
	byObject := make(map[client.Object]cache.ByObject, len(m.Options.Cache.ByObject)+len(declared))
	for k, v := range m.Options.Cache.ByObject {
		byObject[k] = v
	}
	for kind, by := range declared {
		key, given, ok := findByObject(byObject, kind)
		if ok {
			if given.Field != nil && by.Field != nil && given.Field.String() != by.Field.String() {
				return nil, fmt.Errorf("reconcile: the cache of %T is restricted by two field selectors, %q in Options and %q declared: make them one", kind, given.Field, by.Field)
			}
			if given.Label != nil {
				if by.Label == nil {
					by.Label = given.Label
				} else if reqs, selectable := given.Label.Requirements(); selectable {
					by.Label = by.Label.DeepCopySelector().Add(reqs...)
				}
			}
			if by.Field == nil {
				by.Field = given.Field
			}
			if by.Namespaces == nil {
				by.Namespaces = given.Namespaces
			}
		}
		byObject[key] = by
	}
	return byObject, nil
}

// findByObject returns the key of kind's entry in byObject and the entry, kind itself when
// it has none.
func findByObject(byObject map[client.Object]cache.ByObject, kind client.Object) (client.Object, cache.ByObject, bool) {
	for key, by := range byObject {
		if reflect.TypeOf(key) == reflect.TypeOf(kind) {
			return key, by, true
		}
	}
	return kind, cache.ByObject{}, false
}

// declaredOnly returns transform applied to the objects of the kinds ds declare, every
// other object passed through as it came: the cache is the manager's, shared with whatever
// else the project runs on it, such as a plain controller-runtime controller that reads
// managedFields. A typed object is known by its Go type; an unstructured or metadata-only
// one, whose type all kinds share, by its group, version and kind.
func declaredOnly(transform toolscache.TransformFunc, ds []Declaration, scheme *runtime.Scheme) toolscache.TransformFunc {
	types := map[reflect.Type]bool{}
	gvks := map[schema.GroupVersionKind]bool{}
	for _, d := range ds {
		for _, kind := range d.kinds() {
			if isGeneric(kind) {
				if gvk, err := apiutil.GVKForObject(kind, scheme); err == nil {
					gvks[gvk] = true
				}
				continue
			}
			types[reflect.TypeOf(kind)] = true
		}
	}
	return func(in any) (any, error) {
		if types[reflect.TypeOf(in)] {
			return transform(in)
		}
		if obj, ok := in.(runtime.Object); ok && isGeneric(obj) && gvks[obj.GetObjectKind().GroupVersionKind()] {
			return transform(in)
		}
		return in, nil
	}
}

// isGeneric reports whether obj is of a type every kind shares: unstructured or
// metadata-only.
func isGeneric(obj runtime.Object) bool {
	switch obj.(type) {
	case *unstructured.Unstructured, *metav1.PartialObjectMetadata:
		return true
	}
	return false
}
