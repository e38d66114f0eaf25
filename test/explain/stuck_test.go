package explain_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	memcached "github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	appsv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/explain"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// The stuck states of the examples, each made on the cluster with the example's operator
// running, and what explain prints of each, line by line.

func TestExplainsAPodThatCannotPullItsImage(t *testing.T) {
	e := env(t, memcachedOperator)
	badImages(t, e)
	create(t, e, &cachev1beta1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "web"}, Spec: cachev1beta1.MemcachedSpec{Replicas: 1}})

	expect(t, e.Namespace, "memcached/web", func(ctx context.Context) ([]string, error) {
		pods, rs, err := podsOf(ctx, e, 1)
		if err != nil {
			return nil, err
		}
		pod := pods[0]
		return []string{
			"Pod " + pod + ": ImagePullBackOff (image memcached:nope) -> ReplicaSet " + rs + ": Progressing (Available: 0/1) -> Deployment web: Progressing (Available: 0/1) -> Memcached web: Reconciling (RollingOut: 0 of 1 replicas available)",
			"  Warning Failed on Pod " + pod + ": Error: ImagePullBackOff",
		}, nil
	})

	// The same, for a tool: the chain leaf first, and the whole tree.
	r, err := explain.Object(t.Context(), cluster.Config, e.Namespace, "memcached/web")
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		Object struct {
			Kind, Status, State string
			Children            []struct{ Kind, Name, Status string }
		}
		Chains [][]struct {
			Kind, Status, State, Detail string
			HoldsBack                   bool
			Events                      []struct{ Reason, Message string }
		}
	}
	if err := json.Unmarshal(data, &decoded); err != nil {
		t.Fatal(err)
	}
	if o := decoded.Object; o.Kind != "Memcached" || o.Status != "InProgress" || o.State != "Reconciling" || len(o.Children) != 2 ||
		o.Children[0].Kind != "Deployment" || o.Children[1].Kind != "Service" || o.Children[1].Status != "Current" {
		t.Errorf("object in JSON: %+v; want the InProgress Memcached with its Deployment and its Current Service\n%s", o, data)
	}
	if len(decoded.Chains) != 1 || len(decoded.Chains[0]) != 4 {
		t.Fatalf("chains in JSON: %+v; want one of four objects\n%s", decoded.Chains, data)
	}
	if leaf := decoded.Chains[0][0]; leaf.Kind != "Pod" || leaf.Status != "InProgress" || leaf.State != "ImagePullBackOff" ||
		leaf.Detail != "image memcached:nope" || !leaf.HoldsBack || len(leaf.Events) != 1 || leaf.Events[0].Reason != "Failed" {
		t.Errorf("leaf in JSON: %+v; want the pod in ImagePullBackOff with its event\n%s", leaf, data)
	}
}

func TestExplainsEachBranchThatHoldsBack(t *testing.T) {
	e := env(t, podSetOperator)
	badImages(t, e)
	create(t, e, &appsv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "set"}, Spec: appsv1alpha1.PodSetSpec{Size: 2}})

	expect(t, e.Namespace, "podset/set", func(ctx context.Context) ([]string, error) {
		pods, rs, err := podsOf(ctx, e, 2)
		if err != nil {
			return nil, err
		}
		chain := " -> ReplicaSet " + rs + ": Progressing (Available: 0/2) -> Deployment set: Progressing (Available: 0/2) -> PodSet set: Reconciling (RollingOut: 0 of 2 replicas available)"
		return []string{
			"Pod " + pods[0] + ": ImagePullBackOff (image busybox:nope)" + chain,
			"Pod " + pods[1] + ": ImagePullBackOff (image busybox:nope)" + chain,
			"  Warning Failed on Pod " + pods[0] + ": Error: ImagePullBackOff",
			"  Warning Failed on Pod " + pods[1] + ": Error: ImagePullBackOff",
		}, nil
	})
}

func TestExplainsAChildSomeoneElseOwns(t *testing.T) {
	e := env(t, memcachedOperator)
	mc := &cachev1beta1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "web"}, Spec: cachev1beta1.MemcachedSpec{Replicas: 1, Server: cachev1beta1.MemcachedServer{Port: 11211}}}
	create(t, e, memcached.Deployment(mc)) // the Deployment the Memcached wants, made by someone else first
	create(t, e, mc)

	notOwned := fmt.Sprintf("Deployment %s/web exists and has no controller; it is left alone: delete it or rename this Memcached", e.Namespace)
	expect(t, e.Namespace, "memcached/web", func(context.Context) ([]string, error) {
		return []string{
			"Memcached web: Stalled (DeploymentNotOwned: " + notOwned + ")",
			"  Warning DeploymentNotOwned on Memcached web: " + notOwned,
		}, nil
	})
	// The foreign Deployment itself is fine.
	expect(t, e.Namespace, "deploy/web", func(context.Context) ([]string, error) {
		return []string{"Deployment web: Current"}, nil
	})
}

func TestExplainsAFailedCommand(t *testing.T) {
	e := env(t, atOperator)
	create(t, e, &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "report"},
		Spec: cnatv1alpha1.AtSpec{Schedule: time.Now().UTC().Format(time.RFC3339), Command: "false"}})

	expect(t, e.Namespace, "at/report", func(context.Context) ([]string, error) {
		return []string{
			"Pod report: Error (container command, exit code 1: exited with code 1) -> At report: Stalled (CommandFailed: exited with code 1)",
			"  Warning CommandFailed on At report: exited with code 1",
		}, nil
	})
}

func TestExplainsAMissedSchedule(t *testing.T) {
	e := env(t, atOperator)
	schedule := time.Now().Add(-48 * time.Hour).UTC().Format(time.RFC3339)
	late := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "late"},
		Spec: cnatv1alpha1.AtSpec{Schedule: schedule, Command: "true"}}
	create(t, e, late)

	expect(t, e.Namespace, "ats/late", func(ctx context.Context) ([]string, error) {
		// How late the At was is its operator's reading of the clock, to the second.
		if err := e.Get(ctx, client.ObjectKeyFromObject(late), late); err != nil {
			return nil, err
		}
		stalled := conditions.Find(late, conditions.Stalled)
		if stalled == nil {
			return nil, fmt.Errorf("the At is not Stalled yet")
		}
		prefix := "the schedule " + schedule + " passed 48h0m"
		suffix := " ago, more than the 24h0m0s an At may start late; set a new schedule to run the command"
		if !strings.HasPrefix(stalled.Message, prefix) || !strings.HasSuffix(stalled.Message, suffix) {
			return nil, fmt.Errorf("Stalled says %q; want %q...%q", stalled.Message, prefix, suffix)
		}
		return []string{
			"At late: Stalled (ScheduleMissed: " + stalled.Message + ")",
			"  Warning ScheduleMissed on At late: " + stalled.Message,
		}, nil
	})
}

func TestExplainsAPausedObject(t *testing.T) {
	e := env(t, memcachedOperator)
	mc := &cachev1beta1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "cache"}, Spec: cachev1beta1.MemcachedSpec{Replicas: 1}}
	create(t, e, mc)
	// Done, it is one line, by any of kubectl's names of its kind.
	for _, ref := range []string{"memcached/cache", "memcacheds/cache", "Memcached/cache", "memcacheds.cache.example.com/cache"} {
		expect(t, e.Namespace, ref, func(context.Context) ([]string, error) {
			return []string{"Memcached cache: Current"}, nil
		})
	}

	// Paused, then told to grow: nothing happens, and explain says why.
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}},"spec":{"size":2}}`, reconcile.PausedAnnotation)
	if err := e.Patch(t.Context(), mc, client.RawPatch(client.Merge.Type(), []byte(patch))); err != nil {
		t.Fatal(err)
	}
	expect(t, e.Namespace, "memcached/cache", func(context.Context) ([]string, error) {
		return []string{
			`Memcached cache: Paused (PausedByAnnotation: annotation reconcilekit.io/paused is "true"; remove it to resume)`,
		}, nil
	})
}

// expect waits until explain prints of ref in namespace the lines want returns, and logs
// them (go test -v shows what explain prints of each stuck state).
func expect(t *testing.T, namespace, ref string, want func(ctx context.Context) ([]string, error)) {
	t.Helper()
	var printed string
	defer func() { t.Logf("explain %s:\n%s", ref, printed) }()
	reconciletest.Eventually(t, func(ctx context.Context) error {
		lines, err := want(ctx)
		if err != nil {
			return err
		}
		out, err := explained(ctx, namespace, ref)
		if err != nil {
			return err
		}
		if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); !slices.Equal(got, lines) {
			return fmt.Errorf("explain %s printed\n%s\nwant\n%s", ref, out, strings.Join(lines, "\n"))
		}
		printed = out
		return nil
	})
}

// badImages puts an admission policy in the way of the pods of e's namespace that rewrites
// their images' tags, as a registry mirror's policy might, to one that cannot be pulled:
// the example's own Deployment gets pods that never start.
func badImages(t *testing.T, e *reconciletest.Env) {
	t.Helper()
	cluster.MutatingWebhook(t, e.Namespace, corev1.SchemeGroupVersion.WithResource("pods"), func(obj map[string]any) {
		for _, c := range obj["spec"].(map[string]any)["containers"].([]any) {
			image := c.(map[string]any)["image"].(string)
			c.(map[string]any)["image"] = image[:strings.LastIndex(image, ":")+1] + reconciletest.BadImageTag
		}
	})
}

// podsOf returns the names of the n pods of e's namespace, sorted, and of their one
// ReplicaSet.
func podsOf(ctx context.Context, e *reconciletest.Env, n int) (pods []string, replicaSet string, err error) {
	var podList corev1.PodList
	var sets appsv1.ReplicaSetList
	if err := e.List(ctx, &podList, client.InNamespace(e.Namespace)); err != nil {
		return nil, "", err
	}
	if err := e.List(ctx, &sets, client.InNamespace(e.Namespace)); err != nil {
		return nil, "", err
	}
	if len(podList.Items) != n || len(sets.Items) != 1 {
		return nil, "", fmt.Errorf("%d pods and %d ReplicaSets; want %d and one", len(podList.Items), len(sets.Items), n)
	}
	for _, p := range podList.Items {
		pods = append(pods, p.Name)
	}
	slices.Sort(pods)
	return pods, sets.Items[0].Name, nil
}

func create(t *testing.T, e *reconciletest.Env, obj client.Object) {
	t.Helper()
	if err := e.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}
