package explore_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	keyvalv1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	memcached "github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	podsetv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest/explore"
	"github.com/reconcilekit/reconcilekit/workload"
)

// podsetWorkload creates two PodSets, scales one, creates a third whose Deployment's name
// someone else's Deployment holds, and deletes them all.
func podsetWorkload() []explore.Step {
	web := &podsetv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: podsetv1alpha1.PodSetSpec{Size: 2}}
	db := &podsetv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: podsetv1alpha1.PodSetSpec{Size: 1}}
	taken := &podsetv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Name: "taken"}, Spec: podsetv1alpha1.PodSetSpec{Size: 2}}
	return []explore.Step{
		explore.Create(web),
		explore.Create(db),
		explore.Update("size 3", web, func(o client.Object) { o.(*podsetv1alpha1.PodSet).Spec.Size = 3 }),
		explore.Create(foreignDeployment("taken")),
		explore.Create(taken),
		explore.Delete(web, db, taken),
	}
}

// foreignDeployment is a Deployment of someone else's, named name.
func foreignDeployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": "theirs"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: restrictedTemplate(labels),
		},
	}
}

// keyvalWorkload creates a Keyval, changes its configuration and size, and deletes it
// with its volumes.
func keyvalWorkload() []explore.Step {
	kv := &keyvalv1alpha1.Keyval{ObjectMeta: metav1.ObjectMeta{Name: "kv"}, Spec: keyvalv1alpha1.KeyvalSpec{
		Replicas: 1,
		Storage:  keyvalv1alpha1.KeyvalStorage{WhenDeleted: keyvalv1alpha1.Delete},
	}}
	return []explore.Step{
		explore.Create(kv),
		explore.Update("config and 3 replicas", kv, func(o client.Object) {
			k := o.(*keyvalv1alpha1.Keyval)
			k.Spec.Replicas = 3
			k.Spec.Config = map[string]string{"maxmemory": "64mb"}
		}),
		explore.Delete(kv),
	}
}

// atWorkload creates an At due at once, whose command's pod the operator creates, one due
// in 2100, which waits, and one due at once whose pod's name someone else's pod holds;
// suspends the one that waits, and deletes them all. The schedule due at once is the time
// the workload is made: every run of the exploration starts it, with the same spec.
func atWorkload() []explore.Step {
	due := time.Now().UTC().Format(time.RFC3339)
	now := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Name: "now"}, Spec: cnatv1alpha1.AtSpec{Schedule: due, Command: "echo now"}}
	later := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Name: "later"}, Spec: cnatv1alpha1.AtSpec{Schedule: "2100-01-01T00:00:00Z", Command: "echo later"}}
	taken := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Name: "taken"}, Spec: cnatv1alpha1.AtSpec{Schedule: due, Command: "echo taken"}}
	return []explore.Step{
		explore.Create(now),
		explore.Create(later),
		explore.Update("suspended", later, func(o client.Object) { o.(*cnatv1alpha1.At).Spec.Suspend = true }),
		explore.Create(foreignPod("taken")),
		explore.Create(taken),
		explore.Delete(now, later, taken),
	}
}

// memcachedWorkload creates a Memcached, then a ConfigMap of memcached arguments (someone
// else's: the operator reads it and must not write it), scales the Memcached and points
// it at the ConfigMap, and deletes the Memcached.
func memcachedWorkload() []explore.Step {
	mc := &cachev1beta1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: "mc"}, Spec: cachev1beta1.MemcachedSpec{Replicas: 1}}
	args := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "mc-args", Labels: map[string]string{memcached.ConfigMapLabel: "true"}},
		Data:       map[string]string{"args": "-c 2048"},
	}
	return []explore.Step{
		explore.Create(mc),
		explore.Create(args),
		explore.Update("2 replicas and the ConfigMap's arguments", mc, func(o client.Object) {
			m := o.(*cachev1beta1.Memcached)
			m.Spec.Replicas = 2
			m.Spec.Server.ConfigMapRef = &cachev1beta1.ConfigMapReference{Name: args.Name}
		}),
		explore.Delete(mc),
	}
}

// foreignPod is a pod of someone else's, named name.
func foreignPod(name string) *corev1.Pod {
	t := restrictedTemplate(map[string]string{"app": "theirs"})
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: t.Labels}, Spec: t.Spec}
}

// TestExploringTheExamplesFindsNothing explores the examples as they are: no oracle may
// fault them. Within the package's usual tests each is given a small budget of
// perturbed runs, four at a time (six of the PodSet's and the Keyval's, one of each
// class; four of the At's and the Memcached's, one round); make test-explore explores
// every point (-explore.all). The examples are explored side by side, as many as
// -test.parallel allows.
func TestExploringTheExamplesFindsNothing(t *testing.T) {
	examples := []struct {
		name string
		x    explore.Exploration
	}{
		{"PodSet", explore.Exploration{Operator: startOn(t, podsetOperator), Workload: podsetWorkload(), Budget: 6}},
		{"Keyval", explore.Exploration{Operator: startOn(t, keyvalOperator), Workload: keyvalWorkload(), Budget: 6}},
		{"At", explore.Exploration{Operator: startOn(t, atOperator), Workload: atWorkload(), Budget: 4}},
		{"Memcached", explore.Exploration{Operator: startOn(t, memcachedOperator), Workload: memcachedWorkload(), Budget: 4}},
	}
	t.Parallel() // beside the package's other explorations, its operators started
	for _, tc := range examples {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each an operator of its own, in namespaces of its own
			r := explore.Run(t, tc.x)
			exploredMu.Lock()
			defer exploredMu.Unlock()
			explored = append(explored, fmt.Sprintf("explore %s: runs=%d points=%d violations=%d unjudged=%d seconds=%.0f",
				tc.name, r.Runs, r.Points, len(r.Violations), len(r.Unjudged), r.Duration.Seconds()))
		})
	}
}

// restrictedTemplate is a pod template that the restricted Pod Security Standard admits.
func restrictedTemplate(labels map[string]string) corev1.PodTemplateSpec {
	pod := corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36", Command: []string{"sleep", "3600"}}}}
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: workload.Restricted(pod, 1001)}
}
