package reconciletest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcilekit/reconcilekit/internal/fasttier"
	"github.com/reconcilekit/reconcilekit/internal/gotype"
	"github.com/reconcilekit/reconcilekit/internal/rbac"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/webhook"
)

// Operator is an operator under test, described by what its project holds: its API
// types, its CRDs, the ClusterRole generated from its RBAC markers and the declarations
// of its controllers. Start (or Main, in TestMain) brings up a control
// plane with the CRDs and the role; then each test takes an Env of its own and runs
// the operator there, as the role alone empowers it.
//
// Set the fields, then Start; as with envtest.Environment, Start fills in ControlPlane
// and Scheme. The tests of each example operator use it this way:
//
//	var operator = &reconciletest.Operator{
//		User:           "memcached-operator",
//		AddToScheme:    cachev1beta1.AddToScheme,
//		CRDDirectories: []string{filepath.Join("..", "config", "crd", "bases")},
//		Role:           filepath.Join("..", "config", "rbac", "role.yaml"),
//		Nodes:          2,
//		Controllers:    []reconcile.Declaration{controller.New()},
//	}
//
//	func TestMain(m *testing.M) { os.Exit(operator.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		e := operator.Env(t)
//		e.Run(t)
//		// create objects with e (an administrator's client) in e.Namespace,
//		// count the operator's requests with e.Requests
//	}
type Operator struct {
	// User is the name the operator authenticates as, such as "memcached-operator".
	User string

	// AddToScheme adds the operator's API types to a scheme; client-go's types are
	// always added. Nil for an operator of built-in types alone.
	AddToScheme func(*runtime.Scheme) error

	// CRDDirectories hold the operator's CustomResourceDefinitions, such as
	// config/crd/bases.
	CRDDirectories []string

	// Role is the file of the ClusterRole generated from the operator's RBAC markers,
	// such as config/rbac/role.yaml. Start creates it under a name of the operator's
	// own, User followed by the file's name, since controller-gen gives every
	// operator's role the same name.
	Role string

	// Nodes is the number of simulated nodes of the control plane Start starts: zero
	// for an API server alone. Ignored when ControlPlane is set.
	Nodes int

	// Controllers are the declarations of the operator's controllers, as its
	// cmd/main.go makes its manager from them: their cache restrictions, watches and
	// indexes are the ones the operator runs with.
	Controllers []reconcile.Declaration

	// Unchecked names the resources the role check (CheckRole) leaves alone, as
	// "configmaps" or "memcacheds.cache.example.com" (with a subresource,
	// "memcacheds/status.cache.example.com"): what the operator does only outside the
	// managers its tests run, such as the uncached reads of a webhook that cmd/main.go
	// adds. Say why beside each.
	Unchecked []string

	// Partial says these tests are a part of the operator's, as those of a second test
	// package are: the role check then fails only on a verb the role lacks, since the
	// operator's other tests may use what these do not.
	Partial bool

	// ControlPlane is where the operator runs. Start starts one, and Stop stops it,
	// unless it is set already: then operators share it, and its owner stops it.
	ControlPlane *ControlPlane

	// Scheme knows client-go's types and the operator's, set by Start.
	Scheme *runtime.Scheme

	ownsControlPlane bool
	role             string              // the name of the ClusterRole Start created
	rules            []rbacv1.PolicyRule // its rules, what the operator's markers grant
	usage            usage               // what the managers of its Envs used
	conversion       sync.Mutex          // held by the Env whose manager converts the CRDs
	mu               sync.Mutex          // guards converter
	converter        string              // the test whose Env holds conversion
}

// Start prepares a control plane for the operator's tests: starts it unless
// ControlPlane is set, installs the CRDs and creates the operator's ClusterRole. The
// caller must Stop the operator. ctx bounds the start only.
func (o *Operator) Start(ctx context.Context) (err error) {
	o.Scheme = runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(o.Scheme); err != nil {
		return fmt.Errorf("reconciletest: %w", err)
	}
	if o.AddToScheme != nil {
		if err := o.AddToScheme(o.Scheme); err != nil {
			return fmt.Errorf("reconciletest: adding the types of %s: %w", o.User, err)
		}
	}
	if o.ControlPlane == nil {
		if o.ControlPlane, err = Start(ctx, Options{CRDDirectories: o.CRDDirectories, Nodes: o.Nodes}); err != nil {
			return err
		}
		o.ownsControlPlane = true
	} else if len(o.CRDDirectories) > 0 {
		opts := envtest.CRDInstallOptions{Paths: o.CRDDirectories, ErrorIfPathMissing: true}
		if _, err := envtest.InstallCRDs(o.ControlPlane.Config, opts); err != nil {
			return fmt.Errorf("reconciletest: installing the CRDs of %s: %w", o.User, err)
		}
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, o.Stop())
		}
	}()
	o.role, err = o.ControlPlane.createClusterRole(ctx, o.Role, func(role *rbacv1.ClusterRole) {
		role.Name = o.User + "-" + role.Name
		o.rules = role.Rules
	})
	return err
}

// Stop deletes the operator's ClusterRole and stops the control plane if Start
// started it. A second Stop does nothing.
func (o *Operator) Stop() error {
	var err error
	if o.role != "" {
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: o.role}}
		if err = client.IgnoreNotFound(o.ControlPlane.client.Delete(context.Background(), role)); err != nil {
			err = fmt.Errorf("reconciletest: deleting ClusterRole %s: %w", o.role, err)
		}
		o.role = ""
	}
	if o.ownsControlPlane {
		err = errors.Join(err, o.ControlPlane.Stop())
		o.ownsControlPlane, o.ControlPlane = false, nil
	}
	return err
}

// Main is the body of a TestMain: it starts the operator's control plane, runs the
// tests and stops it, and returns the exit code for os.Exit. Errors of the control
// plane go to standard error.
//
// When every test ran (no -run or -skip) and passed, and ran the operator (Env.Run), Main
// then checks the role
// (CheckRole): the role generated from the operator's markers must grant exactly what its
// managers used in the tests and what its declarations imply, and a role that grants more,
// or less, fails the run with the marker lines to remove and to add.
//
// Under go test -short Main starts nothing and runs the tests, and Env skips each that
// asks for one: the tests that need no control plane run without its
// binaries.
func (o *Operator) Main(m *testing.M) int {
	if flag.Parse(); testing.Short() {
		// The fast tier: no control plane, and each test's Env skips it.
		return m.Run()
	}
	if err := o.Start(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if code == 0 && wholeRun() && o.usage.any() {
		if err := o.CheckRole(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	if err := o.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Env is one test's corner of the control plane: a namespace of its own that enforces
// the restricted Pod Security Standard, an administrator's client for the test's own
// moves, and the operator's identity, which only its generated role empowers.
type Env struct {
	// Client is an administrator's client that knows the operator's types. Reads go to
	// the API server.
	client.Client

	// Namespace is the test's namespace, deleted when the test ends; the operator
	// watches it, and Namespaces.
	Namespace string

	// Namespaces are the other namespaces the operator's cache watches, set before Run:
	// those it makes (a tenant's, "tenant-" followed by Namespace) or reads and writes
	// in (a fixed one of shared Secrets). They need not exist yet. AllNamespaces alone
	// has the cache watch every namespace, as an operator of cluster-scoped objects
	// runs. A write of the operator in a namespace its cache does not watch, or a read
	// of its cache there, fails the test at once, naming this field.
	Namespaces []string

	// Config is the operator's: it authenticates as Operator.User, bound to the
	// operator's ClusterRole and to nothing else. A test may wrap it, with Faults say,
	// before Run. From Run on, a request the API server refuses as Forbidden to
	// Operator.User in the Env's namespace (or in none), made with this config or any
	// other, stops the test, naming the RBAC marker to add (AllowRefusals opts out).
	Config *rest.Config

	// Requests counts every request of every manager that Run has started.
	Requests Counter

	operator *Operator
	refusals *refusals

	webhooks   *Webhooks // served to the manager of the last Run; nil if none
	converting bool      // the Env holds the operator's conversion
}

// AllNamespaces, as Env.Namespaces or explore.Exploration.Namespaces, has the operator's
// cache watch every namespace.
const AllNamespaces = "*"

// namespacesField is what a refusal of a namespace outside the cache tells to add it to:
// explore runs the operator with Env.Run too.
const namespacesField = "Env.Namespaces (explore.Exploration.Namespaces in an exploration)"

// Env returns a new Env for the test t. The operator must have been started. Under go
// test -short it skips t instead (SkipShort).
func (o *Operator) Env(t testing.TB) *Env {
	t.Helper()
	fasttier.Skip(t)
	cp := o.ControlPlane
	if cp == nil || o.role == "" {
		t.Fatalf("reconciletest: operator %s has not been started", o.User)
	}
	ns := cp.RestrictedNamespace(t)
	config := cp.ConfigFor(t, o.User, o.role)
	reviewer, err := client.New(config, client.Options{Mapper: cp.client.RESTMapper()})
	if err != nil {
		t.Fatal(err)
	}
	r := &refusals{t: t, user: o.User, operator: o, reviewer: reviewer}
	t.Cleanup(r.end) // registered first, so it runs after the managers have stopped
	// The API server's audit log tells of every refusal, whichever client was refused;
	// what a test injects itself (Faults answering 403) never reaches the server, and is
	// never taken for its answer. A refusal stops the test at once: its requests of the
	// namespace through ControlPlane.Config are cut (a helper's watch ends, its next
	// request fails), and the administrator's client stops it at its next request, on
	// the goroutine that can stop it.
	var disarm func()
	r.cut, disarm = cp.trips.arm(ns)
	t.Cleanup(disarm)
	t.Cleanup(cp.refusals.watch(o.User, ns, r.refused))
	admin, err := client.New(Intercept(cp.Config, r.stopTest), client.Options{Scheme: o.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &Env{
		Client:    admin,
		Namespace: ns,
		Config:    config,
		operator:  o,
		refusals:  r,
	}
}

// AllowRefusals is for a test that provokes a refusal on purpose: from now on the API
// server's refusals of the operator neither fail the test nor stop it.
func (e *Env) AllowRefusals() {
	if e.refusals == nil {
		return
	}
	e.refusals.mu.Lock()
	defer e.refusals.mu.Unlock()
	e.refusals.allowed = true
}

// Run starts the operator in the background until the test ends, as its cmd/main.go
// would, made from its declarations by reconcile.Manager, but with a manager that watches
// the Env's namespace alone and sends its requests through Requests.
// Each Run starts a new manager: stop the one returned to run the operator again, as a
// restart would.
//
// From then on a request the API server refuses as Forbidden ends the test within
// moments rather than when a cache's sync times out minutes later, whichever client of
// the operator's user made it: the error names the verb, the resource and the user, and
// the one +kubebuilder:rbac marker that grants every verb the operator needs on the
// resource and its role lacks (for a kind the controller owns, what ownership.Ensure
// needs: get, list, watch, create, patch). The test stops at once: its watches and
// requests of the Env's namespace through ControlPlane.Config end with an error, and its
// next request through the Env's client, its next Eventually or AwaitReconciles, stops it.
//
// If the operator's declarations have webhooks (reconcile.WithDefaulter, WithValidator,
// WithConversion), Run serves them as ControlPlane.ServeWebhooks does, with no call of the
// test's: a MutatingWebhookConfiguration and a ValidatingWebhookConfiguration named
// "reconciletest-" followed by the Env's namespace, whose webhooks select that namespace
// alone, and the conversion of each converted kind's CRD, all calling the manager Run
// starts, with certificates it makes itself (kept in the Secret webhook-certificates of the
// namespace); Run returns once the API server calls them. The operator's role must allow
// what its certificates need (docs/webhooks.md). Envs of one operator run their webhooks at
// once, each for its namespace; but a CRD has one conversion webhook, so the Envs of an
// operator that declares a conversion take turns, from their first Run to the end of their
// test. Everything is taken away when the test ends. An operator that declares no webhook
// gets none of this.
func (e *Env) Run(t testing.TB) *Manager {
	t.Helper()
	return e.run(t, "")
}

// run is Run, with the metrics endpoint at metricsAddr; none if empty.
func (e *Env) run(t testing.TB, metricsAddr string) *Manager {
	t.Helper()
	if e.refusals != nil { // nil in an Env a test built itself
		e.refusals.start()
	}
	watched := watched(e.Namespace, e.Namespaces...)
	spec := reconcile.Manager{
		Options: manager.Options{
			Scheme:  e.operator.Scheme,
			Cache:   cache.Options{DefaultNamespaces: watched.cacheNamespaces()},
			Metrics: metricsserver.Options{BindAddress: metricsAddr},
		},
		Controllers: e.operator.Controllers,
	}
	hooks := e.serveWebhooks(t, &spec)
	// A write outside the namespaces watched is told as the manager's log tells a failure.
	var started atomic.Pointer[Manager]
	outside := func(message string) {
		if m := started.Load(); m != nil {
			m.log.failed(message)
		} else { // before StartManager has returned
			report(t, message)
		}
	}
	cfg := Intercept(e.Config, watched.guard(namespacesField, outside))
	m := StartManager(t, e.Requests.Wrap(Intercept(cfg, e.operator.usage.record)), spec)
	m.log.mu.Lock()
	m.log.namespaces = namespacesField
	m.log.mu.Unlock()
	if e.refusals != nil {
		m.refused = e.refusals.first
		e.refusals.silence(&m.log.quiet)
		m.log.mu.Lock()
		m.log.fail = e.refusals.failed
		m.log.mu.Unlock()
	}
	started.Store(m)
	if hooks != nil {
		hooks.Await(t)
	}
	return m
}

// serveWebhooks has the manager spec describes serve the webhooks the operator declares
// (ControlPlane.ServeWebhooks) for the Env's namespace, and returns them; nil, at no cost,
// for an operator that declares none. The configurations are named after the namespace,
// and select its objects alone, so that the Envs of one operator run at once; a second
// Run of the Env takes them over from the first. A CRD has one conversion webhook: the
// Envs of an operator that declares a conversion take turns, each holding it from its
// first Run until its test ends.
func (e *Env) serveWebhooks(t testing.TB, spec *reconcile.Manager) *Webhooks {
	t.Helper()
	endpoints, err := spec.Webhooks()
	if err != nil || len(endpoints) == 0 {
		return nil // StartManager reports the error
	}
	converts := false
	for _, ep := range endpoints {
		converts = converts || ep.Type == webhook.Converting
	}
	if converts && !e.converting {
		o := e.operator
		o.mu.Lock()
		holder := o.converter
		o.mu.Unlock()
		if holder == t.Name() {
			t.Fatalf("reconciletest: another Env of %s converts its CRDs in this test: a CRD has one conversion webhook, so the Envs of an operator that declares a conversion run one test at a time; run the second in a test of its own", o.User)
		}
		o.conversion.Lock()
		o.mu.Lock()
		o.converter = t.Name()
		o.mu.Unlock()
		e.converting = true
		t.Cleanup(func() {
			o.mu.Lock()
			o.converter = ""
			o.mu.Unlock()
			o.conversion.Unlock()
		})
	}
	if e.webhooks != nil { // the manager of the previous Run served them
		if err := e.webhooks.remove(t.Context()); err != nil {
			t.Fatalf("reconciletest: %v", err)
		}
	}
	e.webhooks = e.operator.ControlPlane.ServeWebhooks(t, spec, e.Namespace)
	return e.webhooks
}

// refusals reports the API server's refusals of the operator, so that a missing RBAC rule
// ends the test at once and says the whole fix, instead of leaving the operator's cache
// unsynced until it times out with the cause only in the logs.
type refusals struct {
	t        testing.TB
	user     string
	operator *Operator
	reviewer client.Client // the operator's user's, to ask what its role lacks
	cut      func()        // cuts the test's requests through ControlPlane.Config

	mu       sync.Mutex
	watching bool            // from Run on
	allowed  bool            // AllowRefusals
	ended    bool            // the test has ended: nothing more may be reported
	reported map[string]bool // the resources already reported
	cause    string          // the first refusal's report
	stopped  bool            // the test has been stopped for it
	quiet    []*atomic.Bool  // of the managers Run started, silenced by the first refusal
}

// silence has the first refusal silence the log of a manager, so that the refusal is the
// first thing the test prints.
func (r *refusals) silence(quiet *atomic.Bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cause != "" {
		quiet.Store(true)
	}
	r.quiet = append(r.quiet, quiet)
}

func (r *refusals) start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.watching = true
}

// end stops the reporting: testing panics on an error reported after a test has ended.
func (r *refusals) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = true
}

// first returns the report of the first refusal, or "" if there was none.
func (r *refusals) first() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cause
}

// refused is told of each refusal of the operator's user in the test's namespace: it
// reports each resource once, and stops the test at the first.
func (r *refusals) refused(ev auditEvent) {
	what := refusedWhat(ev)
	r.mu.Lock()
	if !r.watching || r.allowed || r.ended || r.reported[what] {
		r.mu.Unlock()
		return
	}
	if r.reported == nil {
		r.reported = map[string]bool{}
	}
	r.reported[what] = true // a cache's retries of it are not asked about again
	r.mu.Unlock()

	report := "reconciletest: the API server refused the operator a request, forbidden: " + r.explain(ev)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	first := r.cause == ""
	if first {
		r.cause = report
		for _, q := range r.quiet {
			q.Store(true)
		}
		fmt.Fprintln(os.Stderr, report) // at once: the test's own output comes when it ends
	}
	r.t.Errorf("%s", report)
	r.cut()
}

// failed reports a failure the manager's log saw, as a refusal is reported: the test fails
// with message, printed at once, and stops at its next request.
func (r *refusals) failed(message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	if r.cause == "" {
		r.cause = message
		for _, q := range r.quiet {
			q.Store(true)
		}
		fmt.Fprintln(os.Stderr, message)
	}
	r.t.Errorf("%s", message)
	r.cut()
}

// refusedWhat names what a refusal refused: the resource (with its group and
// subresource), or the path of a non-resource URL.
func refusedWhat(ev auditEvent) string {
	if ev.ObjectRef == nil {
		path, _, _ := strings.Cut(ev.RequestURI, "?")
		return path
	}
	return ev.ObjectRef.APIGroup + "/" + ev.ObjectRef.Resource + "/" + ev.ObjectRef.Subresource
}

// explain says what was refused and the marker that grants every verb the operator needs
// on it and lacks.
func (r *refusals) explain(ev auditEvent) string {
	if ev.ObjectRef == nil { // a non-resource URL, such as /metrics
		path := refusedWhat(ev)
		return fmt.Sprintf("User %q cannot %s path %q.\nGrant it with this marker among the controller's RBAC markers, then regenerate config/rbac/role.yaml:\n\t// +kubebuilder:rbac:urls=%s,verbs=%s",
			r.user, ev.Verb, path, path, ev.Verb)
	}
	ref := ev.ObjectRef
	resource := ref.Resource
	if ref.Subresource != "" {
		resource += "/" + ref.Subresource
	}
	said := fmt.Sprintf("User %q cannot %s resource %q in API group %q", r.user, ev.Verb, resource, ref.APIGroup)
	if ref.Namespace != "" {
		said += fmt.Sprintf(" in the namespace %q", ref.Namespace)
	}
	if ev.Annotations["authorization.k8s.io/decision"] == "allow" {
		// Its role allows the request; an admission plugin refused it: Pod Security,
		// or OwnerReferencesPermissionEnforcement refusing blockOwnerDeletion to an
		// operator that may not update its owner's finalizers. No marker of the kind's
		// can help; the API server's message says what can.
		fix := ""
		if strings.Contains(ev.message(), "blockOwnerDeletion") {
			fix = r.finalizersFix(ref.APIGroup, ref.Resource)
		}
		return fmt.Sprintf("%s: its role allows it, but admission refused it: %s%s", said, ev.message(), fix)
	}
	needs, why := r.needs(ev.Verb, ref.APIGroup, ref.Resource, ref.Subresource)
	if why == "" { // the verb refused, and its pair
		needs = rbac.Sorted(needs...)
	}
	attrs := authorizationv1.ResourceAttributes{Namespace: ref.Namespace, Group: ref.APIGroup, Resource: ref.Resource, Subresource: ref.Subresource}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	missing, err := rbac.Missing(ctx, r.reviewer, attrs, needs)
	switch {
	case err != nil: // cannot ask: name them all, which fixes it all the same
		missing = rbac.Sorted(needs...)
	case len(missing) == 0: // granted since
		return fmt.Sprintf("%s: %s.\nIts role grants it now.", said, ev.message())
	}
	if why != "" {
		why = fmt.Sprintf(", of the verbs %s needs (%s)", why, strings.Join(rbac.Sorted(needs...), ", "))
	}
	grant := " Grant it all"
	if fix := r.misdeclared(ref.APIGroup, ref.Resource); fix != "" {
		grant = fix + " grant it"
	}
	return fmt.Sprintf("%s.\nIts role lacks %s on %s%s.%s with this marker among the controller's RBAC markers, then regenerate config/rbac/role.yaml:\n\t%s",
		said, strings.Join(missing, ", "), resource, why, grant, rbac.Marker(ref.APIGroup, resource, missing))
}

// needs returns the verbs the operator needs on a resource it was refused verb on, and who
// needs them when they are more than that verb: a cache lists and watches. No other verb is
// assumed: a controller that owns a kind may create it and never patch it, or read it from
// its cache alone and never get it, and a marker must grant what the operator uses, not
// more. The next refusal, or the role check at the end of the tests (Operator.Main), names
// the next verb.
func (r *refusals) needs(verb, group, resource, subresource string) (verbs []string, who string) {
	verbs = []string{verb}
	if (verb == "list" || verb == "watch") && subresource == "" {
		return append(verbs, "list", "watch"), "the manager's cache"
	}
	return verbs, ""
}

// misdeclared says, for a refusal on a kind a declaration owns that the role grants
// nothing on, which kinds the role lets the operator write that no declaration names: the
// children the declaration likely meant, with the WithChildren line that declares them.
func (r *refusals) misdeclared(group, resource string) string {
	var owner reconcile.Declaration
	for _, d := range r.operator.Controllers {
		for _, child := range d.Children() {
			if r.is(child, group, resource) {
				owner = d
			}
		}
	}
	if owner == nil || r.grants(group, resource) {
		return ""
	}
	var kinds []string
	for _, rule := range r.operator.rules {
		if !slices.ContainsFunc(rule.Verbs, func(v string) bool { return v == "create" || v == "patch" || v == "update" || v == "*" }) {
			continue
		}
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				// The shell records events; and a kind whose status the role lets it write is
				// one a controller reconciles, such as a plain controller's beside the
				// declarations in an adopted kubebuilder project, not a child.
				if strings.Contains(res, "/") || res == "events" || r.declared(g, res) || r.grants(g, res+"/status") {
					continue
				}
				gvk, err := r.operator.ControlPlane.client.RESTMapper().KindFor(schema.GroupVersionResource{Group: g, Resource: res})
				if err == nil {
					kinds = append(kinds, "&"+gotype.OfKind(gvk)+"{}")
				}
			}
		}
	}
	if len(kinds) == 0 {
		return ""
	}
	var declared []string
	for _, child := range owner.Children() {
		if g, res, ok := r.resourceOf(child); ok && !(g == group && res == resource) {
			if gvk, err := apiutil.GVKForObject(child, r.operator.Scheme); err == nil {
				declared = append(declared, "&"+gotype.OfKind(gvk)+"{}")
			}
		}
	}
	return fmt.Sprintf("\nIts markers grant nothing on %s, which the declaration owns, and let it write what the declaration does not own: if those are the controller's children, declare them instead, and the role needs nothing more:\n\treconcile.WithChildren(%s)\nOtherwise, if it does own %s,",
		resource, strings.Join(append(declared, kinds...), ", "), resource)
}

// grants reports whether a rule of the operator's role names the resource of the group.
func (r *refusals) grants(group, resource string) bool {
	return slices.ContainsFunc(r.operator.rules, func(rule rbacv1.PolicyRule) bool {
		return (slices.Contains(rule.APIGroups, group) || slices.Contains(rule.APIGroups, "*")) &&
			(slices.Contains(rule.Resources, resource) || slices.Contains(rule.Resources, "*"))
	})
}

// declared reports whether the resource of the group is of a kind a declaration reconciles
// or owns, or a subresource of one.
func (r *refusals) declared(group, resource string) bool {
	for _, d := range r.operator.Controllers {
		for _, obj := range append([]client.Object{d.Object()}, d.Children()...) {
			if r.is(obj, group, resource) {
				return true
			}
		}
	}
	return false
}

// is reports whether obj is of the resource of the API group.
func (r *refusals) is(obj client.Object, group, resource string) bool {
	g, res, ok := r.resourceOf(obj)
	return ok && g == group && res == resource
}

// resourceOf returns the API group and resource of obj's kind.
func (r *refusals) resourceOf(obj client.Object) (group, resource string, ok bool) {
	gvk, err := apiutil.GVKForObject(obj, r.operator.Scheme)
	if err != nil {
		return "", "", false
	}
	m, err := r.operator.ControlPlane.client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return "", "", false
	}
	return gvk.Group, m.Resource.Resource, true
}

// finalizersFix names the marker that lets the operator set blockOwnerDeletion on a child
// of the resource: update on the finalizers of the kinds that own it.
func (r *refusals) finalizersFix(group, resource string) string {
	var markers []string
	for _, d := range r.operator.Controllers {
		for _, child := range d.Children() {
			if !r.is(child, group, resource) {
				continue
			}
			if g, res, ok := r.resourceOf(d.Object()); ok {
				markers = append(markers, "\t"+rbac.Marker(g, res+"/finalizers", []string{"update"}))
			}
		}
	}
	if len(markers) == 0 {
		return ""
	}
	return "\nblockOwnerDeletion needs update on the owner's finalizers: grant it with this marker among the controller's RBAC markers, then regenerate config/rbac/role.yaml:\n" + strings.Join(markers, "\n")
}

// stopTest is the hook of the administrator's client: after a refusal, it stops the
// test at its first request, on the goroutine that can stop it.
func (r *refusals) stopTest(req *Request) (*http.Response, error) {
	r.mu.Lock()
	stop := r.cause != "" && !r.stopped && !r.ended
	r.stopped = r.stopped || stop
	r.mu.Unlock()
	if stop {
		r.t.Helper()
		r.t.Fatalf("reconciletest: the test stops: the operator was refused a request (reported above)")
	}
	return req.Send()
}
