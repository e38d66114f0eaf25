package reconcile

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/internal/rbac"
)

// Adopted is a declaration adopted by a reconciler kubebuilder scaffolded: the scaffold's
// type keeps its Reconcile and SetupWithManager, which the scaffold's main and its tests
// call, and each is one call of Adopted's, with nothing stored in the reconciler:
//
//	var Widgets = reconcile.Adopt(reconcile.For(&shopv1.Widget{},
//		reconcile.LogicFunc[*shopv1.Widget](WidgetReconciler{}.configure), "shop",
//		reconcile.WithChildren(&corev1.ConfigMap{})))
//
//	func (r *WidgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
//		return Widgets.Reconcile(ctx, r.Client, req)
//	}
//
//	func (r *WidgetReconciler) SetupWithManager(mgr ctrl.Manager) error {
//		return Widgets.SetupWithManager(mgr)
//	}
//
// The logic is best a method of the reconciler's type (WidgetReconciler.configure), so that
// a second adopted controller of the same package, with a logic of its own, takes no name
// of the first's. An Adopted is safe for concurrent use.
type Adopted struct {
	decl Declaration

	mu     sync.Mutex
	client client.Client          // the client of the last Reconcile
	shell  rtreconcile.Reconciler // the shell through it
}

// Adopt returns d, adopted by a scaffolded reconciler (see Adopted).
func Adopt(d Declaration) *Adopted {
	return &Adopted{decl: d}
}

// Declaration returns the adopted declaration: what a manager made by Manager lists in
// its Controllers once the project moves to it (docs/adopting.md), in place of the
// reconciler's SetupWithManager.
func (a *Adopted) Declaration() Declaration { return a.decl }

// SetupWithManager sets the declaration up on mgr, a manager the project made itself:
// Setup(mgr, a.Declaration()). It is what the scaffold's SetupWithManager returns.
func (a *Adopted) SetupWithManager(mgr manager.Manager) error {
	return Setup(mgr, a.decl)
}

// Reconcile reconciles the object req names with the declaration's shell, reading and
// writing through c (the reconciler's client), as the scaffold's Reconcile does: it is for
// the scaffold's tests, which call Reconcile themselves. Under a manager the shell
// SetupWithManager set up reconciles, and this is not called. The shell, with the state a
// shell keeps between reconciles (its expectations, its backoff), is made at the first
// call and kept while the calls pass the same client; a call with another client makes a
// new one in its place, so that an Adopted, a package's variable, holds one shell at most
// (a shell alive reports its kind's objects in reconcilekit_condition). A client whose type
// cannot be compared, which no client constructor returns, gets a new shell at each call.
func (a *Adopted) Reconcile(ctx context.Context, c client.Client, req rtreconcile.Request) (rtreconcile.Result, error) {
	return a.shellOf(c).Reconcile(ctx, req)
}

// shellOf returns the shell that reads and writes through c, made at its first use.
func (a *Adopted) shellOf(c client.Client) rtreconcile.Reconciler {
	if c == nil || !reflect.TypeOf(c).Comparable() {
		return a.decl.Reconciler(c)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.shell == nil || a.client != c {
		a.client, a.shell = c, a.decl.Reconciler(c)
	}
	return a.shell
}

// SetupCheck is the name of the readiness check Setup adds for d: "controller-" and the
// reconciled kind in lower case, "controller-widget", served at /readyz/controller-widget.
// It fails until the informer of every kind d declares has synced.
//
// A manager made by Manager has one check for all its controllers instead,
// ControllersCheck ("controllers"), since it knows them all when it is made; Setup adds one
// controller at a time (each adopted reconciler's SetupWithManager calls it for its own),
// and a second check of one name would replace the first, so each has a check of its own.
// A probe that must name one check on both paths reads /readyz, which fails while any
// check does.
func SetupCheck(d Declaration) string {
	return "controller-" + strings.ToLower(d.kind())
}

// finalizes reports whether the declaration keeps a finalizer of its own (WithFinalizer):
// the shell then patches the reconciled object to add and remove it.
func (c *Controller[T]) finalizes() bool { return c.options().cleanup.finalizer != "" }

// RBACMarkers returns the +kubebuilder:rbac marker lines that grant what the shell of d
// does, one a resource, for the controller's file of a kubebuilder project, whose
// controller-gen makes the role from them (make manifests):
//   - the reconciled kind: get, list, watch; patch too with WithFinalizer, which the shell
//     adds and removes with a patch; its status: patch; its finalizers: update, when the
//     controller owns children (the children's owner references block their owner's
//     deletion, which the API server lets only a user that may update the owner's
//     finalizers set) or keeps a finalizer;
//   - each kind it owns (WithChildren): get, list, watch, create, patch, as
//     ownership.Ensure needs them;
//   - each other kind it watches (WithReferences, WithWatch): get, list, watch;
//   - the CRDs, list and watch, when it declares an optional kind (WithOptional);
//   - events (events.k8s.io): create, patch, for the events the shell records.
//
// Each kind's resource is the lower-case plural kubebuilder's markers use, guessed from
// its kind in scheme as controller-gen guesses a CRD's; a kind whose CRD names another
// plural (+kubebuilder:resource:path) needs that plural in its line. The role check of
// reconciletest.Operator (CheckRole) holds a project's markers to what its tests use and
// names the lines to add or remove. RBACMarkers fails when scheme does not know a kind of
// d, naming it.
func RBACMarkers(d Declaration, scheme *runtime.Scheme) ([]string, error) {
	type resource struct{ group, plural string }
	resourceOf := func(obj client.Object) (resource, error) {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			return resource{}, fmt.Errorf("reconcile: the RBAC markers of the %s controller: the scheme does not know %s: add its API's AddToScheme to the scheme: %w", d.kind(), goName(obj), err)
		}
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		return resource{gvk.Group, plural.Resource}, nil
	}
	var lines []string
	seen := map[resource]bool{}
	add := func(r resource, verbs ...string) {
		if seen[r] {
			return
		}
		seen[r] = true
		lines = append(lines, rbac.Marker(r.group, r.plural, verbs))
	}
	own, err := resourceOf(d.Object())
	if err != nil {
		return nil, err
	}
	children := d.Children()
	finalizes := false
	if f, ok := d.(interface{ finalizes() bool }); ok {
		finalizes = f.finalizes()
	}
	if finalizes {
		add(own, "get", "list", "watch", "patch")
	} else {
		add(own, "get", "list", "watch")
	}
	add(resource{own.group, own.plural + "/status"}, "patch")
	if len(children) > 0 || finalizes {
		add(resource{own.group, own.plural + "/finalizers"}, "update")
	}
	for _, child := range children {
		r, err := resourceOf(child)
		if err != nil {
			return nil, err
		}
		add(r, "get", "list", "watch", "create", "patch")
	}
	for _, kind := range d.kinds()[1:] {
		r, err := resourceOf(kind)
		if err != nil {
			return nil, err
		}
		add(r, "get", "list", "watch")
	}
	if len(d.Optional()) > 0 {
		add(resource{"apiextensions.k8s.io", "customresourcedefinitions"}, "list", "watch")
	}
	add(resource{"events.k8s.io", "events"}, "create", "patch")
	return lines, nil
}
