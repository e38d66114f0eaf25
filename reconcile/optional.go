package reconcile

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// WithOptional marks kinds the controller owns, references or watches (WithChildren,
// WithReferences, WithWatch) as optional: kinds served by a CustomResourceDefinition that
// may be installed after the operator starts, or removed while it runs, such as the
// ServiceMonitor of a Prometheus that is not always there. The operator starts without
// them and does not restart for them:
//
//   - the manager watches CustomResourceDefinitions, starts the kind's watch (and cache)
//     once its CRD is established and serves the declared version, and stops it, removing
//     the kind's informer from the cache, once the CRD is removed; each time it reconciles
//     the controller's objects again;
//   - while the CRD is absent, a reconcile whose logic reads or writes the kind through the
//     Scope's Writer (ownership.Ensure, EnsureSet, Delete, or s.Client) is refused that
//     read or write before anything is sent, and ends with the object Stalled, with reason
//     ReasonWaitingForCRD and a message naming the CRD (and one Warning event), whatever
//     the logic did with the error: not retried, since the CRD's arrival reconciles the
//     object again;
//   - reconcilekit_kinds_waiting_for_crd is 1 for the kind while its CRD is absent, 0 once
//     it is established;
//   - the readiness check counts the kind's cache only while its CRD exists;
//   - a restriction of the kind's cache (WithCache) is accepted while the CRD is absent,
//     the kind taken as namespaced until its CRD says (a cluster-scoped optional kind whose
//     cache is restricted must be installed when the operator starts).
//
// A shard (package sharding) follows the optional child kinds too, through Optional: its
// assigner watches a kind only while the API server serves it.
//
// The operator needs list and watch on customresourcedefinitions (apiextensions.k8s.io). A kind served by the API server itself (its group has no dot,
// such as ConfigMap or Deployment.apps), the reconciled kind itself, and a kind the
// declaration does not otherwise declare are refused, and so is a kind that one controller
// of a manager declares optional and another does not. A shell without a manager
// (Controller.Reconciler) treats every kind as installed.
func WithOptional(kinds ...client.Object) Option {
	return func(o *options) { o.wiring.optional = append(o.wiring.optional, kinds...) }
}

// ReasonWaitingForCRD is Stalled's reason while the logic needs a kind declared optional
// (WithOptional) whose CustomResourceDefinition is not installed or not established. The
// object is reconciled again once it is.
const ReasonWaitingForCRD = "WaitingForCRD"

// checkOptional refuses, in the shell of obj's controller, optional kinds that cannot be:
// built in, the reconciled kind, or not declared otherwise.
func checkOptional(o *options, obj client.Object, scheme *runtime.Scheme) []error {
	var errs []error
	declared := slices.Clone(o.wiring.children)
	declared = append(declared, o.wiring.referenced...)
	for _, w := range o.wiring.watches {
		declared = append(declared, w.kind)
	}
	for _, kind := range o.wiring.optional {
		name := goName(kind)
		switch {
		case reflect.TypeOf(kind) == reflect.TypeOf(obj):
			errs = append(errs, fmt.Errorf("WithOptional(&%s{}) names the reconciled kind: a controller cannot run without its own kind; make the operator's start depend on its CRD instead", name))
			continue
		case !slices.ContainsFunc(declared, sameKind(kind)):
			errs = append(errs, fmt.Errorf("WithOptional(&%s{}) names a kind the controller does not declare: declare it with WithChildren, WithReferences or WithWatch too", name))
			continue
		}
		if scheme == nil {
			continue
		}
		if gvk, err := apiutil.GVKForObject(kind, scheme); err == nil && !strings.Contains(gvk.Group, ".") {
			errs = append(errs, fmt.Errorf("WithOptional(&%s{}): %s is served by the API server itself, never by a CustomResourceDefinition; remove it from WithOptional", name, gvk.GroupKind()))
		}
	}
	return errs
}

// optionalAgree refuses a kind one controller of a manager declares optional and another
// declares required: the kind has one cache in a manager, which the CRD gate removes when
// the CRD goes.
func optionalAgree(ds []Declaration) error {
	optional := map[reflect.Type]string{}
	for _, d := range ds {
		for _, kind := range d.Optional() {
			optional[reflect.TypeOf(kind)] = d.kind()
		}
	}
	var errs []error
	for _, d := range ds {
		mine := d.Optional()
		for _, kind := range d.kinds() {
			t := reflect.TypeOf(kind)
			by, ok := optional[t]
			if ok && !slices.ContainsFunc(mine, func(o client.Object) bool { return reflect.TypeOf(o) == t }) {
				errs = append(errs, fmt.Errorf("reconcile: %s is optional for the %s controller (WithOptional) and required by the %s controller: one manager has one cache of a kind, stopped when its CRD goes; declare it optional in both or in neither",
					t.Elem().Name(), by, d.kind()))
			}
		}
	}
	return errors.Join(errs...)
}

// optionalMapper returns provider's RESTMapper made to answer for the optional kinds of
// ds whose CRD is absent: namespaced, by the resource name kubebuilder would give them. The
// manager's cache asks, when it is made, whether each kind restricted by a ByObject entry
// (WithCache, a shard's label) is namespaced, and would refuse to be made for a kind not
// installed. While the CRD is absent nothing else asks for the kind (the gate keeps its
// watch stopped and the Writer refuses it); once it is installed the mapper answers from
// discovery. A cluster-scoped optional kind restricted by a ByObject entry must therefore
// be installed when the operator starts.
func optionalMapper(ds []Declaration, scheme *runtime.Scheme, provider func(*rest.Config, *http.Client) (meta.RESTMapper, error)) func(*rest.Config, *http.Client) (meta.RESTMapper, error) {
	optional := map[schema.GroupKind]schema.GroupVersionKind{}
	for _, d := range ds {
		for _, kind := range d.Optional() {
			if gvk, err := apiutil.GVKForObject(kind, scheme); err == nil {
				optional[gvk.GroupKind()] = gvk
			}
		}
	}
	if len(optional) == 0 {
		return provider
	}
	if provider == nil {
		provider = apiutil.NewDynamicRESTMapper // as controller-runtime does
	}
	return func(cfg *rest.Config, c *http.Client) (meta.RESTMapper, error) {
		m, err := provider(cfg, c)
		if err != nil {
			return nil, err
		}
		return absentMapper{RESTMapper: m, optional: optional}, nil
	}
}

// absentMapper answers for optional kinds its RESTMapper does not know.
type absentMapper struct {
	meta.RESTMapper
	optional map[schema.GroupKind]schema.GroupVersionKind
}

// RESTMapping answers for an optional kind not installed: namespaced, by its guessed
// resource.
func (m absentMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	mapping, err := m.RESTMapper.RESTMapping(gk, versions...)
	gvk, optional := m.optional[gk]
	if err == nil || !optional || !meta.IsNoMatchError(err) {
		return mapping, err
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return &meta.RESTMapping{Resource: plural, GroupVersionKind: gvk, Scope: meta.RESTScopeNamespace}, nil
}
