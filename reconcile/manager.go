package reconcile

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
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
//   - the cache's restrictions of each kind (WithCache), and a transform that drops
//     managedFields and shares equal label maps (ownership.TransformCompact) unless Options
//     set one;
//   - clients that ask the API server for no compression, unless Compression;
//   - a readiness check, "readyz", that fails until every declared kind's cache has synced
//     and the controllers have started, and a liveness check, "healthz", served at
//     Options.HealthProbeBindAddress by the library, which answers a failing check with
//     503 Service Unavailable (controller-runtime's server answers 500); checks added with
//     AddReadyzCheck and AddHealthzCheck before Start are served with them;
//   - the library's metrics, on controller-runtime's registry, unless NoMetrics;
//   - the declared webhooks (WithDefaulter, WithValidator, WithConversion), on the
//     manager's webhook server, at the paths Webhooks lists; a manager that declares none
//     has no webhook server; a readiness check, "webhooks", that fails until the server
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

// New makes the manager, with every declared controller added, from cfg.
func (m Manager) New(cfg *rest.Config) (mgr manager.Manager, err error) {
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
	byObject, err := m.cacheByObject()
	if err != nil {
		return nil, err
	}
	opts.Cache.ByObject = byObject
	opts.MapperProvider = optionalMapper(m.Controllers, opts.Scheme, opts.MapperProvider) // WithOptional
	if opts.Cache.DefaultTransform == nil {
		opts.Cache.DefaultTransform = ownership.TransformCompact()
	}
	// The library serves the probes, so that a failing check answers 503 (probes.go).
	ln, err := probeListener(opts.HealthProbeBindAddress)
	if err != nil {
		return nil, err
	}
	defer func() {
		if ln != nil && mgr == nil {
			_ = ln.Close()
		}
	}()
	opts.HealthProbeBindAddress = "0"
	if !m.Compression && !cfg.DisableCompression {
		cfg = rest.CopyConfig(cfg)
		cfg.DisableCompression = true
	}
	crMgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("reconcile: making the manager: %w", err)
	}
	built := crMgr
	if ln != nil {
		if built, err = serveProbes(crMgr, ln, endpoint(opts.ReadinessEndpointName, "/readyz"), endpoint(opts.LivenessEndpointName, "/healthz")); err != nil {
			return nil, err
		}
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
		if err := built.AddReadyzCheck("webhooks", built.GetWebhookServer().StartedChecker()); err != nil {
			return nil, err
		}
	}
	if m.Certificates != nil {
		if err := m.Certificates.SetupWithManager(built); err != nil {
			return nil, err
		}
	}
	if err := built.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := built.AddReadyzCheck("readyz", readyCheck(built.GetCache(), built.GetScheme(), kinds, started(built, opts.LeaderElection))); err != nil {
		return nil, err
	}
	return built, nil
}

// endpoint is path, or def if path is empty, as controller-runtime defaults its probes'.
func endpoint(path, def string) string {
	if path == "" {
		return def
	}
	return path
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
				errs = append(errs, fmt.Errorf("reconcile: the %s controller declares %T, which the manager's scheme does not know: add its AddToScheme to Options.Scheme", d.kind(), kind))
				continue
			}
			if uncached == nil {
				continue
			}
			for _, off := range uncached.DisableFor {
				if reflect.TypeOf(off) == reflect.TypeOf(kind) {
					errs = append(errs, fmt.Errorf("reconcile: the %s controller watches %T, which Options.Client.Cache.DisableFor reads uncached: a watched kind is cached; remove it from DisableFor", d.kind(), kind))
				}
			}
		}
	}
	errs = append(errs, optionalAgree(m.Controllers))
	return errors.Join(errs...)
}

// cacheByObject returns the cache's restrictions by kind: the declarations' (WithCache),
// which must agree among themselves, each narrowed by the one Options already has for its
// kind, such as the shard label package sharding adds: both hold.
func (m Manager) cacheByObject() (map[client.Object]cache.ByObject, error) {
	declared := map[client.Object]cache.ByObject{}
	for _, d := range m.Controllers {
		for _, rule := range d.cacheRules() {
			key, existing, ok := findByObject(declared, rule.kind)
			if ok && !reflect.DeepEqual(existing, rule.by) {
				return nil, fmt.Errorf("reconcile: the cache of %T is restricted twice, differently (by the %s controller's WithCache and another's): one manager has one cache of a kind; make the restrictions agree",
					rule.kind, d.kind())
			}
			declared[key] = rule.by
		}
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
