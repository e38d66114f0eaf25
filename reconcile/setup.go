package reconcile

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/webhook"
)

// Setup adds the declared controllers to mgr, a manager the project made itself (with
// ctrl.NewManager, as kubebuilder's scaffold does), beside whatever else runs on it: plain
// controller-runtime controllers, the project's own webhooks and checks. It is the path of a
// project that adopts the library one controller at a time, and is called where the
// scaffold sets a controller up:
//
//	func (r *WidgetReconciler) SetupWithManager(mgr ctrl.Manager) error {
//		return reconcile.Setup(mgr, widgets)
//	}
//
// (Adopted.SetupWithManager is that call, beside a Reconcile for the scaffold's tests.)
//
// Setup adds what a manager can take once made: each controller with its watches, indexes
// and storage migration (WithStorageMigration); the optional kinds' watch of CRDs
// (WithOptional); the library's metrics, on controller-runtime's registry; the declared
// webhooks (WithDefaulter, WithValidator, WithConversion) on the manager's webhook server;
// and a readiness check for each declaration, SetupCheck ("controller-widget"), that fails
// until the informer of every kind it declares has synced, naming those still listing. It refuses what Manager.New refuses of declarations (no declaration, two of one
// kind, a kind the scheme does not know, a declaration that cannot run) and a webhook path
// the server already serves, such as a kubebuilder webhook of the same kind.
//
// What a manager fixes when it is made stays as the project made it, so that compared with
// a manager made by Manager the project's manager has:
//   - no restriction of the cache from the declarations: a declaration with WithCache is
//     refused, naming the kind, since its controller would read a cache larger than it
//     declares; put the restriction in the project's cache options and drop WithCache, or
//     make the manager with Manager (WithCacheAll is accepted: it asks for what the
//     project's manager does);
//   - the children cached with every object of their kinds: the Writer labels them
//     (ownership.OwnedByLabel) as under Manager, but the cache is not restricted to
//     them, and no one labels the children made before; Setup logs, once, the
//     restriction Manager would have made of each kind (such as
//     reconcilekit.io/owned-by in (widget.shop.example.com)), which the project's
//     cache options (Options.Cache.ByObject) can make themselves once every child
//     carries the label;
//   - no cache transform (ownership.TransformCompact): the declared kinds are cached with
//     their managedFields, as every other, unless the project's cache options set one;
//   - clients that ask the API server for compression, as controller-runtime's do (Manager
//     asks for none; see Manager.Compression);
//   - readiness checks that do not wait for the controllers to start (Setup cannot
//     tell whether the manager elects a leader, and a replica standing by must be ready);
//   - no shard gate (Manager.Gate, package sharding) and no managed certificates
//     (Manager.Certificates): the webhook server serves the certificate the project gives it.
//
// Setup must be called before mgr starts, and once for each declaration.
func Setup(mgr manager.Manager, decls ...Declaration) error {
	if len(decls) == 0 {
		return errors.New("reconcile: Setup needs at least one controller declaration (reconcile.For)")
	}
	scheme := mgr.GetScheme()
	m := Manager{Controllers: decls}
	errs := []error{m.check(scheme, nil)}
	for _, d := range decls {
		for _, rule := range d.cacheRules() {
			if rule.all {
				continue // WithCacheAll: what the project's manager does anyway
			}
			errs = append(errs, fmt.Errorf("reconcile: the %s controller restricts the cache of %s (WithCache), which a manager fixes when it is made: reconcile.Setup cannot add it to a manager made already; give the restriction to the manager's cache options (Options.Cache.ByObject) and drop WithCache, or make the manager with reconcile.Manager",
				d.kind(), goName(rule.kind)))
		}
	}
	hooks, err := m.webhooks(scheme)
	errs = append(errs, err)
	var hooked []served
	for _, s := range hooks {
		if len(s.endpoints) > 0 {
			hooked = append(hooked, s)
		}
	}
	if len(hooked) > 0 {
		errs = append(errs, servedAlready(mgr.GetWebhookServer(), hooked))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if full := uncachedChildren(decls, scheme); len(full) > 0 {
		// Said once, as the manager is set up: the operator works, its memory grows with
		// the cluster's objects of these kinds rather than with its own.
		mgr.GetLogger().Info("reconcile.Setup cannot restrict the cache of a manager made already: the declared children are cached with every object of their kinds, not by the label their Writer gives them; make the manager with reconcile.Manager, or restrict the project's cache options (Options.Cache.ByObject) to them",
			"label", ownership.OwnedByLabel, "restrictions", full)
	}
	crds := newCRDGate(mgr, true)
	for _, d := range decls {
		if err := d.setup(mgr, nil, crds, true); err != nil {
			return err
		}
	}
	if len(hooked) > 0 {
		if err := serveWebhooks(mgr.GetWebhookServer(), scheme, hooked); err != nil {
			return err
		}
	}
	for _, d := range decls {
		name := SetupCheck(d)
		always := func() bool { return true }
		if err := mgr.AddReadyzCheck(name, readyCheck(mgr.GetCache(), scheme, crds.gated(d.kinds()), always)); err != nil {
			return fmt.Errorf("reconcile: the readiness check of the %s controller: %w", d.kind(), err)
		}
	}
	return nil
}

// servedAlready refuses the webhooks of all that srv serves already: registering a path
// again would panic.
func servedAlready(srv ctrlwebhook.Server, all []served) error {
	var errs []error
	for _, s := range all {
		for _, e := range s.endpoints {
			if !serves(srv, e.Path) {
				continue
			}
			switch e.Type {
			case webhook.Converting:
				errs = append(errs, fmt.Errorf("reconcile: the manager's webhook server serves %s already, where the %s controller's conversion (WithConversion) is served: give every declaration with WithConversion to one reconcile.Setup call, and remove the project's own conversion webhook", e.Path, e.Kind.Kind))
			default:
				option := "WithDefaulter"
				if e.Type == webhook.Validating {
					option = "WithValidator"
				}
				errs = append(errs, fmt.Errorf("reconcile: the manager's webhook server serves %s already: the %s controller declares it (%s) and the project sets up a webhook of %s too (SetupWebhookWithManager); remove one of them", e.Path, e.Kind.Kind, option, e.Kind.Kind))
			}
		}
	}
	return errors.Join(errs...)
}

// serves reports whether srv serves path.
func serves(srv ctrlwebhook.Server, path string) bool {
	_, pattern := srv.WebhookMux().Handler(&http.Request{Method: http.MethodPost, URL: &url.URL{Path: path}})
	return pattern == path
}
