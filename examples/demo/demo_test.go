package main

import (
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	cronjobv1 "github.com/reconcilekit/reconcilekit/examples/cronjob/api/v1"
	storev1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	appsv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func TestTheSamplesConvergeOnALocalControlPlane(t *testing.T) {
	reconciletest.SkipShort(t)
	ctrl.SetLogger(logr.Discard())
	root, err := repositoryRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := run(t.Context(), options{root: root, timeout: 3 * time.Minute, out: t.Output()}); err != nil {
		t.Fatal(err)
	}
}

func TestDescribeSaysWhetherAnOperatorConverged(t *testing.T) {
	meta := metav1.ObjectMeta{Namespace: "default", Name: "sample"}
	available := func(status metav1.ConditionStatus) []metav1.Condition {
		return []metav1.Condition{{Type: "Available", Status: status}}
	}
	ready := func(status metav1.ConditionStatus) []metav1.Condition {
		return []metav1.Condition{{Type: "Ready", Status: status}}
	}
	keyvalMeta := metav1.ObjectMeta{Namespace: "default", Name: "sample", Generation: 2}
	tests := []struct {
		name      string
		obj       client.Object
		converged bool
	}{
		{"a Memcached that is available", &cachev1beta1.Memcached{ObjectMeta: meta,
			Status: cachev1beta1.MemcachedStatus{Conditions: available(metav1.ConditionTrue)}}, true},
		{"a Memcached that is not available", &cachev1beta1.Memcached{ObjectMeta: meta,
			Status: cachev1beta1.MemcachedStatus{Conditions: available(metav1.ConditionFalse)}}, false},
		{"a Memcached without conditions", &cachev1beta1.Memcached{ObjectMeta: meta}, false},
		{"a PodSet listing as many ready pods as it asks for", &appsv1alpha1.PodSet{ObjectMeta: meta,
			Spec:   appsv1alpha1.PodSetSpec{Size: 2},
			Status: appsv1alpha1.PodSetStatus{PodNames: []string{"a", "b"}, ReadyReplicas: 2}}, true},
		{"a PodSet whose pods are not all ready", &appsv1alpha1.PodSet{ObjectMeta: meta,
			Spec:   appsv1alpha1.PodSetSpec{Size: 2},
			Status: appsv1alpha1.PodSetStatus{PodNames: []string{"a", "b"}, ReadyReplicas: 1}}, false},
		{"a PodSet that lists too few pods", &appsv1alpha1.PodSet{ObjectMeta: meta,
			Spec:   appsv1alpha1.PodSetSpec{Size: 2},
			Status: appsv1alpha1.PodSetStatus{PodNames: []string{"a"}, ReadyReplicas: 2}}, false},
		{"an At that is done", &cnatv1alpha1.At{ObjectMeta: meta,
			Status: cnatv1alpha1.AtStatus{Phase: cnatv1alpha1.PhaseDone}}, true},
		{"an At that is running", &cnatv1alpha1.At{ObjectMeta: meta,
			Status: cnatv1alpha1.AtStatus{Phase: cnatv1alpha1.PhaseRunning}}, false},
		{"a Keyval Ready for its generation", &storev1alpha1.Keyval{ObjectMeta: keyvalMeta,
			Status: storev1alpha1.KeyvalStatus{ObservedGeneration: 2, Conditions: ready(metav1.ConditionTrue)}}, true},
		{"a Keyval Ready for an older generation", &storev1alpha1.Keyval{ObjectMeta: keyvalMeta,
			Status: storev1alpha1.KeyvalStatus{ObservedGeneration: 1, Conditions: ready(metav1.ConditionTrue)}}, false},
		{"a Keyval that is not Ready", &storev1alpha1.Keyval{ObjectMeta: keyvalMeta,
			Status: storev1alpha1.KeyvalStatus{ObservedGeneration: 2, Conditions: ready(metav1.ConditionFalse)}}, false},
		{"a CronJob Ready for its generation, a run of it succeeded", &cronjobv1.CronJob{ObjectMeta: keyvalMeta,
			Status: cronjobv1.CronJobStatus{ObservedGeneration: 2, LastSuccessfulTime: &metav1.Time{}, Conditions: ready(metav1.ConditionTrue)}}, true},
		{"a CronJob Ready, no run of it succeeded yet", &cronjobv1.CronJob{ObjectMeta: keyvalMeta,
			Status: cronjobv1.CronJobStatus{ObservedGeneration: 2, Conditions: ready(metav1.ConditionTrue)}}, false},
		{"a CronJob Ready for an older generation", &cronjobv1.CronJob{ObjectMeta: keyvalMeta,
			Status: cronjobv1.CronJobStatus{ObservedGeneration: 1, LastSuccessfulTime: &metav1.Time{}, Conditions: ready(metav1.ConditionTrue)}}, false},
	}
	scheme, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := describe(t.Context(), c, tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if r.converged != tt.converged {
				t.Errorf("converged = %v, want %v: %+v", r.converged, tt.converged, r)
			}
		})
	}
}

func TestDescribeRefusesAKindItDoesNotKnow(t *testing.T) {
	if _, err := describe(t.Context(), nil, &corev1.Pod{}); err == nil {
		t.Error("described a pod")
	}
}

func TestATableConvergesWhenEveryRowHas(t *testing.T) {
	tests := []struct {
		name  string
		table table
		want  bool
	}{
		{"every row converged", table{{converged: true}, {converged: true}}, true},
		{"one row not converged", table{{converged: true}, {converged: false}}, false},
		{"no rows", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.table.converged(); got != tt.want {
				t.Errorf("converged() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTheRepositoryRootIsFoundAboveTheWorkingDirectory(t *testing.T) {
	if _, err := repositoryRoot(); err != nil {
		t.Fatal(err)
	}
}

func TestOutsideTheRepositoryTheDemoSaysWhereToRunIt(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := repositoryRoot()
	if err == nil || !strings.Contains(err.Error(), "make demo") {
		t.Errorf("err = %v, want one that says where to run the demo", err)
	}
}
