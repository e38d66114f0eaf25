package explore_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"maps"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/readiness"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest/explore"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// appEntry is the corpus's operator whose readiness follows a Job: an application with a
// ConfigMap of its configuration, a Secret of random data made once and an init Job named
// by its configuration's hash, Ready once that Job has completed. On an API server alone
// no Job runs and the shop stays Reconciling through every run; on a simulated cluster the
// Job completes some seconds after the operator made it, so the shop's status changes
// after the operator first went quiet: what a fresh operator writes then is news, not a
// needless write. Each variant has one bug of a class the differential oracle exists for.
var appEntry = corpusEntry{
	name:     "an application Ready once its init Job, named by its configuration, has completed",
	operator: appOf(app{}),
	masked:   []string{"Secret shop-credentials data.password: differs between reference runs"},
	variants: []mutant{
		{
			bug:      "a field removed from the spec and never from a child (the tier's label kept on the ConfigMap)",
			oracles:  []explore.Oracle{explore.SpecNotReached},
			caughtBy: explore.Spec,
			logic:    appOf(app{keepLabels: true}),
		},
		{
			bug:      "a changed field not propagated (the ConfigMap made once, never updated)",
			oracles:  []explore.Oracle{explore.SpecNotReached, explore.SpecNotActedOn},
			caughtBy: explore.Spec,
			logic:    appOf(app{createOnly: true}),
		},
		{
			bug:      "a child left from an old configuration (older init Jobs never deleted)",
			oracles:  []explore.Oracle{explore.SpecNotReached, explore.NotRecovered, explore.EndState},
			caughtBy: explore.Spec,
			logic:    appOf(app{keepOldJobs: true}),
		},
	},
}

func appOf(logic app) *reconcile.Controller[*Shop] {
	return shopOf(logic, reconcile.WithChildren(&corev1.ConfigMap{}, &corev1.Secret{}, &batchv1.Job{}))
}

// app is the application's logic. With keepLabels, the live ConfigMap's labels are kept,
// so a tier's label outlives it; with createOnly, the ConfigMap is made once and never
// updated; with keepOldJobs, the init Jobs of older configurations are never deleted.
type app struct{ keepLabels, createOnly, keepOldJobs bool }

func (l app) Reconcile(ctx context.Context, shop *Shop, s reconcile.Scope) requeue.Outcome {
	labels := map[string]string{shopLabel: shop.Name}
	if l.keepLabels {
		live := &corev1.ConfigMap{}
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: shop.Namespace, Name: shop.Name + "-config"}, live); err == nil {
			maps.Copy(labels, live.Labels)
		}
	}
	if shop.Spec.Tier != "" {
		labels[tierLabel] = shop.Spec.Tier
	}
	config := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: shop.Namespace, Name: shop.Name + "-config", Labels: labels},
		Data:       maps.Clone(shop.Spec.Config),
	}
	var opts []ownership.Option
	if l.createOnly {
		opts = append(opts, ownership.CreateOnly())
	}
	if _, _, err := ownership.Ensure(ctx, s.Writer, shop, config, opts...); err != nil {
		return requeue.Retry(err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: shop.Namespace, Name: shop.Name + "-credentials"},
		StringData: map[string]string{"user": "shop", "password": rand.Text()},
	}
	if _, _, err := ownership.Ensure(ctx, s.Writer, shop, secret, ownership.CreateOnly()); err != nil {
		return requeue.Retry(err)
	}
	job, err := l.initJob(ctx, shop, s)
	if err != nil {
		return requeue.Retry(err)
	}
	// Ready follows the init Job: on an API server alone it never runs.
	if state, err := readiness.Of(job); err == nil && state.Rollout == readiness.RolloutComplete {
		conditions.Remove(shop, conditions.Reconciling)
		return ready(shop, "Initialised")
	}
	conditions.MarkTrue(shop, conditions.Reconciling, "Initialising", "waiting for job %s to complete", job.Name)
	conditions.MarkFalse(shop, conditions.Ready, "Initialising", "job %s has not completed", job.Name)
	return requeue.Done()
}

// initJob makes the Job of the shop's configuration, once (a Job's template cannot
// change), and deletes those of its configurations before unless keepOldJobs.
func (l app) initJob(ctx context.Context, shop *Shop, s reconcile.Scope) (*batchv1.Job, error) {
	labels := map[string]string{shopLabel: shop.Name}
	tmpl := restrictedTemplate(labels)
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	// On a simulated cluster the Job completes some seconds after the operator went
	// quiet, as an init Job does.
	tmpl.Annotations = map[string]string{reconciletest.RunForAnnotation: "8s"}
	tmpl.Spec.Containers[0].Command = []string{"echo"}
	for _, k := range slices.Sorted(maps.Keys(shop.Spec.Config)) {
		tmpl.Spec.Containers[0].Command = append(tmpl.Spec.Containers[0].Command, fmt.Sprintf("%s=%s", k, shop.Spec.Config[k]))
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: shop.Namespace, Name: shop.Name + "-init-" + configHash(shop.Spec.Config), Labels: labels},
		Spec:       batchv1.JobSpec{Template: tmpl},
	}
	live, _, err := ownership.Ensure(ctx, s.Writer, shop, job, ownership.CreateOnly())
	if err != nil || l.keepOldJobs {
		return live, err
	}
	var jobs batchv1.JobList
	if err := s.Client.List(ctx, &jobs, client.InNamespace(shop.Namespace), client.MatchingLabels(labels)); err != nil {
		return nil, err
	}
	for i := range jobs.Items {
		if old := &jobs.Items[i]; old.Name != job.Name {
			if _, err := ownership.Delete(ctx, s.Writer, shop, old); err != nil {
				return nil, err
			}
		}
	}
	return live, nil
}
