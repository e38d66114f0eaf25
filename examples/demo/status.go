package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	at "github.com/reconcilekit/reconcilekit/examples/at/controller"
	cronjobv1 "github.com/reconcilekit/reconcilekit/examples/cronjob/api/v1"
	storev1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	appsv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/schedule"
)

// row is one line of the status table: an object, what its status says and its pods.
type row struct {
	kind, name, status, pods string
	converged                bool // the operator has done all it is asked to
}

// table is the status of the samples.
type table []row

// converged says whether every operator has done all it is asked to.
func (t table) converged() bool {
	for _, r := range t {
		if !r.converged {
			return false
		}
	}
	return len(t) > 0
}

// pending names the objects not converged yet, and how far they got.
func (t table) pending() string {
	var objects []string
	for _, r := range t {
		if !r.converged {
			objects = append(objects, fmt.Sprintf("%s %s (%s)", r.kind, r.name, r.status))
		}
	}
	return strings.Join(objects, ", ")
}

func (t table) String() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "KIND\tNAME\tSTATUS\tPODS")
	for _, r := range t {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.kind, r.name, orDash(r.status), orDash(r.pods))
	}
	_ = w.Flush() // a strings.Builder does not fail
	return b.String()
}

// screen shows the status table as it changes.
type screen struct {
	out    io.Writer
	redraw bool      // in place, out being a terminal; else a new block for every change
	start  time.Time // of the demo
	footer string    // shown under the table when it is redrawn in place
	shown  string
}

// watch reads and shows the status of the samples every second until done says a table is
// the last, or ctx is done; it returns the last table it read, and ctx's cause if it ended.
// A nil done never says so.
func (s *screen) watch(ctx context.Context, c client.Client, samples []client.Object, done func(table) bool) (table, error) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last table
	for {
		t, err := status(ctx, c, samples)
		if ctx.Err() != nil {
			return last, context.Cause(ctx)
		}
		if err != nil {
			return last, err
		}
		last = t
		s.show(t)
		if done != nil && done(t) {
			return t, nil
		}
		select {
		case <-ctx.Done():
			return last, context.Cause(ctx)
		case <-tick.C:
		}
	}
}

func (s *screen) show(t table) {
	text := t.String()
	elapsed := time.Since(s.start).Round(time.Second)
	switch {
	case s.redraw:
		fmt.Fprintf(s.out, "\033[H\033[2J%v into the demo\n\n%s%s", elapsed, text, s.footer)
	case text != s.shown:
		fmt.Fprintf(s.out, "\n%v into the demo\n%s", elapsed, text)
	}
	s.shown = text
}

// status reads the samples back and describes each.
func status(ctx context.Context, c client.Client, samples []client.Object) (table, error) {
	t := make(table, 0, len(samples))
	for _, obj := range samples {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return nil, err
		}
		r, err := describe(ctx, c, obj)
		if err != nil {
			return nil, err
		}
		t = append(t, r)
	}
	return t, nil
}

// describe says what obj's status says, and whether its operator has converged: a
// Memcached Available, a PodSet listing as many ready pods as it asks for, an At DONE, a
// Keyval Ready for its generation (its servers ready, so their claims bound), a CronJob
// Ready for its generation once a Job of it has succeeded.
func describe(ctx context.Context, c client.Reader, obj client.Object) (row, error) {
	switch o := obj.(type) {
	case *cachev1beta1.Memcached:
		// Its status does not name the pods; its Deployment's labels find them.
		var pods corev1.PodList
		err := c.List(ctx, &pods, client.InNamespace(o.Namespace), client.MatchingLabels{
			"app.kubernetes.io/name": "memcached", "app.kubernetes.io/instance": o.Name})
		var names []string
		for _, p := range pods.Items {
			names = append(names, p.Name)
		}
		return row{"Memcached", o.Name, summary(o.Status.Conditions), strings.Join(names, ", "),
			meta.IsStatusConditionTrue(o.Status.Conditions, conditions.Available)}, err
	case *appsv1alpha1.PodSet:
		size := o.Spec.Size
		return row{"PodSet", o.Name, fmt.Sprintf("%d/%d ready", o.Status.ReadyReplicas, size), strings.Join(o.Status.PodNames, ", "),
			len(o.Status.PodNames) == int(size) && o.Status.ReadyReplicas == size}, nil
	case *cnatv1alpha1.At:
		status := o.Status.Phase
		if when, err := schedule.ParseTime(o.Spec.Schedule); err == nil && status == cnatv1alpha1.PhasePending && time.Now().Before(when) {
			status += fmt.Sprintf(", due in %v", time.Until(when).Round(time.Second))
		}
		if cond := meta.FindStatusCondition(o.Status.Conditions, at.Succeeded); cond != nil {
			status += fmt.Sprintf(" %s=%s (%s)", cond.Type, cond.Status, cond.Reason)
		}
		return row{"At", o.Name, status, o.Status.PodName, o.Status.Phase == cnatv1alpha1.PhaseDone}, nil
	case *storev1alpha1.Keyval:
		var pods corev1.PodList
		err := c.List(ctx, &pods, client.InNamespace(o.Namespace), client.MatchingLabels{
			"app.kubernetes.io/name": "keyval", "app.kubernetes.io/instance": o.Name})
		var names []string
		for _, p := range pods.Items {
			names = append(names, p.Name)
		}
		return row{"Keyval", o.Name, summary(o.Status.Conditions), strings.Join(names, ", "),
			o.Status.ObservedGeneration == o.Generation && meta.IsStatusConditionTrue(o.Status.Conditions, conditions.Ready)}, err
	case *cronjobv1.CronJob:
		// Its Jobs, those still there: the newest of each outcome, the history pruned.
		var jobs batchv1.JobList
		err := c.List(ctx, &jobs, client.InNamespace(o.Namespace), client.MatchingLabels{"app.kubernetes.io/instance": o.Name})
		var names []string
		for _, j := range jobs.Items {
			names = append(names, j.Name)
		}
		status := summary(o.Status.Conditions)
		if a := meta.FindStatusCondition(o.Status.Conditions, conditions.Available); a != nil {
			status += " (" + a.Reason + ")"
		}
		return row{"CronJob", o.Name, status, strings.Join(names, ", "),
			o.Status.LastSuccessfulTime != nil && o.Status.ObservedGeneration == o.Generation &&
				meta.IsStatusConditionTrue(o.Status.Conditions, conditions.Ready)}, err
	}
	return row{}, fmt.Errorf("the demo cannot describe a %T", obj)
}

// summary lists conditions as Type=Status.
func summary(conds []metav1.Condition) string {
	var s []string
	for _, c := range conds {
		s = append(s, fmt.Sprintf("%s=%s", c.Type, c.Status))
	}
	return strings.Join(s, " ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
