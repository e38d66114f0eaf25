package explore_test

import (
	"context"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/readiness"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest/explore"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// storefrontEntry is the corpus's operator whose readiness follows a Deployment, which
// never becomes available on an API server alone: the Shop stays Reconciling, kstatus
// InProgress, through every run, and its spec transitions are judged by the differential
// oracle all the same. Each variant has one bug of a class that oracle exists for.
var storefrontEntry = corpusEntry{
	name:     "a Deployment labelled by the shop's tier, its configuration passed on, a ConfigMap of its tier",
	operator: storefrontOf(storefront{}),
	variants: []mutant{
		{
			bug:      "a field removed from the spec and never from a child (the tier's label kept)",
			oracles:  []explore.Oracle{explore.SpecNotReached},
			caughtBy: explore.Spec,
			logic:    storefrontOf(storefront{keepLabels: true}),
		},
		{
			// A new tier's value, which the reference run showed in the Deployment's
			// label, never reaches it either: spec not acted on, by the learnt mapping.
			bug:      "a changed field not propagated (the Deployment made once, never updated)",
			oracles:  []explore.Oracle{explore.SpecNotReached, explore.SpecNotActedOn},
			caughtBy: explore.Spec,
			logic:    storefrontOf(storefront{createOnly: true}),
		},
		{
			// The old tier's ConfigMap stays after the transition, and the transition's
			// after the spec's return.
			bug:      "a child left from an old configuration (an old tier's ConfigMap never deleted)",
			oracles:  []explore.Oracle{explore.SpecNotReached, explore.NotRecovered},
			caughtBy: explore.Spec,
			logic:    storefrontOf(storefront{keepOldTiers: true}),
		},
	},
}

func storefrontOf(logic storefront) *reconcile.Controller[*Shop] {
	return shopOf(logic, reconcile.WithChildren(&appsv1.Deployment{}, &corev1.ConfigMap{}))
}

// storefront runs a Deployment for each shop, labelled by its tier when it has one, with
// its configuration as its server's arguments, and a ConfigMap of its tier's
// (shop-tier-<tier>), those of the tiers it had before deleted. Its Ready follows the
// Deployment's availability. With keepLabels, the live Deployment's labels are kept, so
// a tier's label outlives it; with createOnly, the Deployment is made once and never
// updated; with keepOldTiers, the ConfigMaps of older tiers are never deleted.
type storefront struct{ keepLabels, createOnly, keepOldTiers bool }

const tierPurpose = "tier"

func (l storefront) Reconcile(ctx context.Context, shop *Shop, s reconcile.Scope) requeue.Outcome {
	selector := map[string]string{shopLabel: shop.Name}
	labels := maps.Clone(selector)
	if l.keepLabels {
		live := &appsv1.Deployment{}
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: shop.Namespace, Name: shop.Name}, live); err == nil {
			maps.Copy(labels, live.Labels)
		}
	}
	if shop.Spec.Tier != "" {
		labels[tierLabel] = shop.Spec.Tier
	}
	tmpl := restrictedTemplate(selector)
	for _, k := range slices.Sorted(maps.Keys(shop.Spec.Config)) {
		tmpl.Spec.Containers[0].Args = append(tmpl.Spec.Containers[0].Args, "--"+k+"="+shop.Spec.Config[k])
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: shop.Namespace, Name: shop.Name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: tmpl,
		},
	}
	var opts []ownership.Option
	if l.createOnly {
		opts = append(opts, ownership.CreateOnly())
	}
	live, _, err := ownership.Ensure(ctx, s.Writer, shop, dep, opts...)
	if err != nil {
		return requeue.Retry(err)
	}

	tierLabels := map[string]string{shopLabel: shop.Name, purposeLabel: tierPurpose}
	want := ""
	if shop.Spec.Tier != "" {
		want = shop.Name + "-tier-" + shop.Spec.Tier
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: shop.Namespace, Name: want, Labels: tierLabels},
			Data:       map[string]string{"tier": shop.Spec.Tier},
		}
		if _, _, err := ownership.Ensure(ctx, s.Writer, shop, cm); err != nil {
			return requeue.Retry(err)
		}
	}
	if !l.keepOldTiers {
		var cms corev1.ConfigMapList
		if err := s.Client.List(ctx, &cms, client.InNamespace(shop.Namespace), client.MatchingLabels(tierLabels)); err != nil {
			return requeue.Retry(err)
		}
		for i := range cms.Items {
			if old := &cms.Items[i]; old.Name != want {
				if _, err := ownership.Delete(ctx, s.Writer, shop, old); err != nil {
					return requeue.Retry(err)
				}
			}
		}
	}

	// Ready follows the Deployment: on an API server alone no pod ever runs, and the shop
	// stays Reconciling, which kstatus reads as InProgress.
	if readiness.Deployment(live).Available {
		conditions.Remove(shop, conditions.Reconciling)
		return ready(shop, "Available")
	}
	conditions.MarkTrue(shop, conditions.Reconciling, "Rollout", "waiting for deployment %s to become available", shop.Name)
	conditions.MarkFalse(shop, conditions.Ready, "Rollout", "deployment %s is not available", shop.Name)
	return requeue.Done()
}
