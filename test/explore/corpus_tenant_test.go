package explore_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest/explore"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// Tenant is the corpus's cluster-scoped custom resource: named after a namespace, whose
// settings (a ConfigMap) its operator makes there. A cluster-scoped owner may own
// namespaced children: the garbage collector follows the reference across scopes, where
// a namespaced owner of another namespace's object it would not.
type Tenant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ShopSpec   `json:"spec,omitempty"`
	Status            ShopStatus `json:"status,omitempty"`
}

func (s *Tenant) GetConditions() []metav1.Condition  { return s.Status.Conditions }
func (s *Tenant) SetConditions(c []metav1.Condition) { s.Status.Conditions = c }
func (s *Tenant) GetObservedGeneration() int64       { return s.Status.ObservedGeneration }
func (s *Tenant) SetObservedGeneration(g int64)      { s.Status.ObservedGeneration = g }

func (s *Tenant) DeepCopyObject() runtime.Object {
	c := *s
	s.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Spec.Config = maps.Clone(s.Spec.Config)
	c.Status.Conditions = slices.Clone(s.Status.Conditions)
	return &c
}

// TenantList is a list of Tenants.
type TenantList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Tenant `json:"items"`
}

func (l *TenantList) DeepCopyObject() runtime.Object {
	c := *l
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	c.Items = make([]Tenant, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*Tenant)
	}
	return &c
}

// tenantWorkload creates the Tenant of the run's namespace, changes its configuration,
// and deletes it.
func tenantWorkload() []explore.Step {
	tenant := &Tenant{ObjectMeta: metav1.ObjectMeta{Name: explore.Namespace}, Spec: ShopSpec{Tier: "gold", Config: map[string]string{"greeting": "hello"}}}
	return []explore.Step{
		explore.Create(tenant),
		explore.Update("a new greeting", tenant, func(o client.Object) { o.(*Tenant).Spec.Config["greeting"] = "bonjour" }),
		explore.Delete(tenant),
	}
}

// settings makes a tenant's settings, a ConfigMap in the namespace the tenant is named
// after, holding its tier and configuration, owned by the tenant across scopes; with
// unowned, the ConfigMap is made with no owner, as if a cluster-scoped owner could not
// own a namespaced object, and outlives its tenant.
type settings struct{ unowned bool }

func tenantOf(logic reconcile.Logic[*Tenant]) *reconcile.Controller[*Tenant] {
	return reconcile.For(&Tenant{}, logic, "tenant-operator", reconcile.WithChildren(&corev1.ConfigMap{}))
}

func (l settings) Reconcile(ctx context.Context, tenant *Tenant, s reconcile.Scope) requeue.Outcome {
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(tenant.Spec.Config)) {
		lines = append(lines, fmt.Sprintf("%s=%s", k, tenant.Spec.Config[k]))
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: tenant.Name, Name: "tenant-settings"},
		Data:       map[string]string{"tier": tenant.Spec.Tier, "config": strings.Join(lines, "\n")},
	}
	if l.unowned {
		live := &corev1.ConfigMap{}
		err := s.Client.Get(ctx, client.ObjectKeyFromObject(cm), live)
		switch {
		case apierrors.IsNotFound(err):
			err = s.Client.Create(ctx, cm)
		case err == nil && !maps.Equal(live.Data, cm.Data):
			live.Data = cm.Data
			err = s.Client.Update(ctx, live)
		}
		if err != nil {
			return requeue.Retry(err)
		}
	} else if _, _, err := ownership.Ensure(ctx, s.Writer, tenant, cm); err != nil {
		return requeue.Retry(err)
	}
	conditions.MarkTrue(tenant, conditions.Ready, "Configured", "the tenant's settings are made")
	return requeue.Done()
}
