package sharding_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/sharding"
)

// Gizmo is a child kind of the sharded ConfigMaps declared optional: its CRD is installed
// while the shards run.
type Gizmo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// GizmoList is a list of Gizmos.
type GizmoList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Gizmo `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (g *Gizmo) DeepCopyObject() runtime.Object {
	out := *g
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// DeepCopyObject implements runtime.Object.
func (l *GizmoList) DeepCopyObject() runtime.Object {
	out := &GizmoList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	for _, g := range l.Items {
		out.Items = append(out.Items, *g.DeepCopyObject().(*Gizmo))
	}
	return out
}

var gizmoGVK = schema.GroupVersionKind{Group: "optional.sharding.test", Version: "v1", Kind: "Gizmo"}

// scheme is the tests' scheme: client-go's kinds, CRDs and Gizmos.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		panic(err)
	}
	s.AddKnownTypes(gizmoGVK.GroupVersion(), &Gizmo{}, &GizmoList{})
	metav1.AddToGroupVersion(s, gizmoGVK.GroupVersion())
	return s
}()

func TestAnOptionalChildKindIsAssignedOnceItsCRDIsEstablishedNotWaitedFor(t *testing.T) {
	defer sharding.SetCRDRecheck(time.Second)()
	cp := reconciletest.StartAPIServer(t)
	c := cp.Client(t, scheme)
	ns := cp.Namespace(t)
	r := newReconciles(t)
	createConfigMaps(t, c, ns, 3)
	decl := reconcile.For(&corev1.ConfigMap{}, r.logic("a"), "copier",
		reconcile.WithChildren(&corev1.Secret{}, &Gizmo{}), reconcile.WithOptional(&Gizmo{}))
	startShard(t, cp.Config, ns, "a", decl)

	// Gizmos are not installed: the shard gets its objects all the same.
	await(t, placed(c, ns, sharding.NewRing("a"), r))

	// Installed: a Gizmo with no shard (made before sharding was on, say) gets its owner's.
	installGizmos(t, c)
	owner := &corev1.ConfigMap{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "cm-0"}, owner); err != nil {
		t.Fatal(err)
	}
	gizmo := &Gizmo{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm-0"}}
	if err := controllerutil.SetControllerReference(owner, gizmo, scheme); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(t.Context(), gizmo); err != nil {
		t.Fatal(err)
	}
	await(t, func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(gizmo), gizmo); err != nil {
			return err
		}
		if got := gizmo.Labels[shardLabel]; got != "a" {
			return fmt.Errorf("the Gizmo is labelled %q, want its owner's shard %q", got, "a")
		}
		return nil
	})
}

// installGizmos creates the CRD of Gizmos and waits until it is established.
func installGizmos(t *testing.T, c client.Client) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gizmos." + gizmoGVK.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: gizmoGVK.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Gizmo", ListKind: "GizmoList", Plural: "gizmos", Singular: "gizmo"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: gizmoGVK.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}},
			}},
		},
	}
	if err := c.Create(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	await(t, func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
			return err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return errors.New("the CRD of Gizmos is not established yet")
	})
}
