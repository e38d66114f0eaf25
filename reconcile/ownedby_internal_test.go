package reconcile

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	rthandler "sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/reconcilekit/reconcilekit/ownership"
)

func TestTheChildrensLabelNamesTheOwnersKindWithinALabelValue(t *testing.T) {
	for _, tc := range []struct {
		gk   schema.GroupKind
		want string
	}{
		{schema.GroupKind{Group: "cache.example.com", Kind: "Memcached"}, "memcached.cache.example.com"},
		{schema.GroupKind{Kind: "ConfigMap"}, "configmap"},
		{schema.GroupKind{Group: "apps", Kind: "Deployment"}, "deployment.apps"},
	} {
		if got := ownedByValue(tc.gk); got != tc.want {
			t.Errorf("ownedByValue(%v) = %q, want %q", tc.gk, got, tc.want)
		}
	}
	long := schema.GroupKind{Group: strings.Repeat("very-long-group.", 5) + "example.com", Kind: "SomethingRatherLong"}
	other := schema.GroupKind{Group: long.Group, Kind: long.Kind + "2"}
	v := ownedByValue(long)
	if len(v) > 63 {
		t.Errorf("ownedByValue of a long kind is %d characters, more than a label value takes: %q", len(v), v)
	}
	if _, err := labels.NewRequirement(ownership.OwnedByLabel, "=", []string{v}); err != nil {
		t.Errorf("ownedByValue of a long kind is no label value: %v", err)
	}
	if v == ownedByValue(other) {
		t.Errorf("two long kinds that differ after the first 54 characters share the label value %q", v)
	}
}

// Which child kinds the cache holds by the label, and by which selector: every kind owned,
// except those a declaration of the manager reads otherwise or restricts itself.
func TestTheCacheOfAChildKindIsRestrictedToTheChildrenUnlessItIsReadOtherwise(t *testing.T) {
	nop := LogicFunc[*corev1.ConfigMap](nil)
	secrets := LogicFunc[*corev1.Secret](nil)
	picked := labels.SelectorFromSet(labels.Set{"picked": "yes"})
	for _, tc := range []struct {
		name  string
		decls []Declaration
		want  map[string]string // kind -> the cache's label selector; "" when in full
	}{
		{"children by their owner's label", []Declaration{
			For(&corev1.ConfigMap{}, nop, "o", WithChildren(&corev1.Secret{}, &appsv1.Deployment{}))},
			map[string]string{"Secret": "reconcilekit.io/owned-by in (configmap)", "Deployment": "reconcilekit.io/owned-by in (configmap)"}},
		{"two owners of one kind: the children of both", []Declaration{
			For(&corev1.ConfigMap{}, nop, "o", WithChildren(&appsv1.Deployment{})),
			For(&corev1.Secret{}, secrets, "o", WithChildren(&appsv1.Deployment{}))},
			map[string]string{"Deployment": "reconcilekit.io/owned-by in (configmap,secret)"}},
		{"a kind referenced is cached in full", []Declaration{
			For(&corev1.ConfigMap{}, nop, "o", WithChildren(&corev1.Secret{})).
				WithReferences(&corev1.Secret{}, func(*corev1.ConfigMap) []string { return nil })},
			map[string]string{"Secret": ""}},
		{"a kind another declaration references is cached in full", []Declaration{
			For(&corev1.ConfigMap{}, nop, "o", WithChildren(&corev1.Service{})),
			For(&corev1.Secret{}, secrets, "o").WithReferences(&corev1.Service{}, func(*corev1.Secret) []string { return nil })},
			map[string]string{"Service": ""}},
		{"a kind watched is cached in full", []Declaration{
			For(&corev1.ConfigMap{}, nop, "o", WithChildren(&corev1.Pod{}), WithWatch(&corev1.Pod{}, &rthandler.EnqueueRequestForObject{}))},
			map[string]string{"Pod": ""}},
		{"a kind reconciled is cached in full", []Declaration{
			For(&corev1.ConfigMap{}, nop, "o", WithChildren(&corev1.Secret{})),
			For(&corev1.Secret{}, secrets, "o")},
			map[string]string{"Secret": ""}},
		{"WithCacheAll caches in full", []Declaration{
			For(&corev1.ConfigMap{}, nop, "o", WithChildren(&corev1.Secret{}), WithCacheAll(&corev1.Secret{}))},
			map[string]string{"Secret": ""}},
		{"WithCache replaces the label", []Declaration{
			For(&corev1.ConfigMap{}, nop, "o", WithChildren(&corev1.Secret{}), WithCache(&corev1.Secret{}, cache.ByObject{Label: picked}))},
			map[string]string{"Secret": "picked=yes"}},
		{"an optional kind keeps controller-runtime's cache", []Declaration{
			For(&corev1.ConfigMap{}, nop, "o", WithChildren(&corev1.Secret{}), WithOptional(&corev1.Secret{}))},
			map[string]string{"Secret": ""}},
		{"an unstructured kind keeps controller-runtime's cache", []Declaration{
			For(&corev1.ConfigMap{}, nop, "o", WithChildren(unstructuredOf(schema.GroupVersionKind{Version: "v1", Kind: "Secret"})))},
			map[string]string{"Unstructured": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Manager{Controllers: tc.decls}
			byObject, err := m.cacheByObject(ownedKinds(tc.decls, clientgoscheme.Scheme))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for kind, by := range byObject {
				sel := ""
				if by.Label != nil {
					sel = by.Label.String()
				}
				got[kindOf(kind)] = sel
			}
			for kind, want := range tc.want {
				if got[kind] != want {
					t.Errorf("%s cached by %q, want %q (all: %v)", kind, got[kind], want, got)
				}
			}
		})
	}
}

func kindOf(obj client.Object) string {
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return "Unstructured"
	}
	gvk, err := apiutil.GVKForObject(obj, clientgoscheme.Scheme)
	if err != nil {
		return "?"
	}
	return gvk.Kind
}

func unstructuredOf(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

// One manager has one cache of a kind: a declaration that caches it in full and another
// that restricts it are refused, as two restrictions that differ are.
func TestWithCacheAllAndARestrictionOfTheSameKindAreRefused(t *testing.T) {
	decls := []Declaration{
		For(&corev1.ConfigMap{}, LogicFunc[*corev1.ConfigMap](nil), "o", WithChildren(&corev1.Secret{}), WithCacheAll(&corev1.Secret{})),
		For(&corev1.Service{}, LogicFunc[*corev1.Service](nil), "o", WithCache(&corev1.Secret{}, cache.ByObject{Label: labels.SelectorFromSet(labels.Set{"a": "b"})})),
	}
	m := Manager{Options: ctrl.Options{}, Controllers: decls}
	if _, err := m.cacheByObject(ownedKinds(decls, clientgoscheme.Scheme)); err == nil || !strings.Contains(err.Error(), "restricted twice") {
		t.Errorf("cacheByObject = %v, want a refusal of two caches of Secrets", err)
	}
}

// The logic's own creates and updates of a child, with the Scope's client rather than
// Ensure, carry the label; an object that is not a child of the owner's kind does not.
func TestTheScopesClientLabelsTheChildrenTheLogicWritesItself(t *testing.T) {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "owner", UID: "u"}}
	c := labellingClient{Client: fake.NewClientBuilder().Build(), childLabel: childLabelOf(owner, clientgoscheme.Scheme)}
	child := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "child", Labels: map[string]string{"app": "x"}}}
	if err := ctrlSetController(owner, child); err != nil {
		t.Fatal(err)
	}
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other"}}
	for _, obj := range []client.Object{child, other} {
		if err := c.Create(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
	if got := child.Labels; got[ownership.OwnedByLabel] != "configmap" || got["app"] != "x" {
		t.Errorf("the child was created with labels %v, want its own and %s=configmap", got, ownership.OwnedByLabel)
	}
	if _, ok := other.Labels[ownership.OwnedByLabel]; ok {
		t.Errorf("an object no owner controls was labelled: %v", other.Labels)
	}
	delete(child.Labels, ownership.OwnedByLabel)
	if err := c.Update(context.Background(), child); err != nil {
		t.Fatal(err)
	}
	if child.Labels[ownership.OwnedByLabel] != "configmap" {
		t.Errorf("the child was updated without its label: %v", child.Labels)
	}
}

func ctrlSetController(owner, obj client.Object) error {
	return ownership.SetController(owner, obj, clientgoscheme.Scheme)
}
