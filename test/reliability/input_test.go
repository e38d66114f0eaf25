package reliability

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	at "github.com/reconcilekit/reconcilekit/examples/at/controller"
	"github.com/reconcilekit/reconcilekit/schedule"
)

func TestSchemasRejectInvalidSpecs(t *testing.T) {
	admin := cp.Client(t, scheme)
	ns := cp.Namespace(t)
	aMemcached := func(spec map[string]any) *unstructured.Unstructured {
		return custom(ns, "cache.example.com", "Memcached", spec)
	}
	aPodSet := func(spec map[string]any) *unstructured.Unstructured {
		return custom(ns, "apps.example.com", "PodSet", spec)
	}
	anAt := func(schedule, command any) *unstructured.Unstructured {
		spec := map[string]any{"schedule": schedule, "command": command}
		for k, v := range spec {
			if v == nil {
				delete(spec, k)
			}
		}
		return custom(ns, "cnat.example.com", "At", spec)
	}

	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		// field is the field the API server must name in its refusal, empty for a spec
		// it must accept.
		field string
	}{
		{"a Memcached of size 0 is refused", aMemcached(map[string]any{"size": 0}), "spec.size"},
		{"a Memcached of size 4 is refused", aMemcached(map[string]any{"size": 4}), "spec.size"},
		{"a Memcached of size -1 is refused", aMemcached(map[string]any{"size": -1}), "spec.size"},
		{"a Memcached of size three is refused", aMemcached(map[string]any{"size": "three"}), "spec.size"},
		{"a Memcached without a size is refused", aMemcached(map[string]any{}), "spec.size"},
		{"a Memcached on port 0 is refused", aMemcached(map[string]any{"size": 1, "containerPort": 0}), "spec.containerPort"},
		{"a Memcached on port 65536 is refused", aMemcached(map[string]any{"size": 1, "containerPort": 65536}), "spec.containerPort"},
		{"a Memcached of size 1 on the default port is accepted", aMemcached(map[string]any{"size": 1}), ""},
		{"a Memcached of size 3 on port 65535 is accepted", aMemcached(map[string]any{"size": 3, "containerPort": 65535}), ""},
		{"a PodSet of size -1 is refused", aPodSet(map[string]any{"size": -1}), "spec.size"},
		{"a PodSet of size 101 is refused", aPodSet(map[string]any{"size": 101}), "spec.size"},
		{"a PodSet of size 0 is accepted", aPodSet(map[string]any{"size": 0}), ""},
		{"a PodSet of size 100 is accepted", aPodSet(map[string]any{"size": 100}), ""},
		{"an At with an empty command is refused", anAt("2030-01-02T15:04:05Z", ""), "spec.command"},
		{"an At without a command is refused", anAt("2030-01-02T15:04:05Z", nil), "spec.command"},
		{"an At without a schedule is refused", anAt(nil, "date"), "spec.schedule"},
		{"an At scheduled tomorrow is refused", anAt("tomorrow", "date"), "spec.schedule"},
		{"an At with an empty schedule is refused", anAt("", "date"), "spec.schedule"},
		{"an At scheduled in another time zone is refused", anAt("2030-01-02T15:04:05+01:00", "date"), "spec.schedule"},
		{"an At scheduled without a T is refused", anAt("2030-01-02 15:04:05Z", "date"), "spec.schedule"},
		{"an At scheduled in lower case is refused", anAt("2030-01-02t15:04:05z", "date"), "spec.schedule"},
		{"an At scheduled in month 13 is refused", anAt("2030-13-02T15:04:05Z", "date"), "spec.schedule"},
		{"an At scheduled at 25 o'clock is refused", anAt("2030-01-02T25:04:05Z", "date"), "spec.schedule"},
		{"an At scheduled as a number is refused", anAt(1893596645, "date"), "spec.schedule"},
		{"an At scheduled in UTC is accepted", anAt("2030-01-02T15:04:05Z", "date"), ""},
		{"an At scheduled to the fraction of a second is accepted", anAt("2030-01-02T15:04:05.25Z", "date"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := admin.Create(t.Context(), tc.obj, client.DryRunAll)
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.field == "":
			case !apierrors.IsInvalid(err):
				t.Fatalf("got %v, want the spec refused as invalid", err)
			case !strings.Contains(err.Error(), tc.field):
				t.Fatalf("the refusal does not name %s: %v", tc.field, err)
			}
			// What the schema lets through, the operator must understand.
			if sched, ok := tc.obj.Object["spec"].(map[string]any)["schedule"].(string); ok && err == nil {
				if _, err := schedule.ParseTime(sched); err != nil {
					t.Errorf("the schema accepts a schedule the At operator cannot read: %v", err)
				}
			}
		})
	}
}

func custom(ns, group, kind string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(group + "/v1alpha1")
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName("input")
	return u
}

func TestUnservableSpecsAreReportedWithoutARetryStorm(t *testing.T) {
	s := sized()
	admin := cp.Client(t, scheme)
	// One namespace admits no pod at all: its workloads never start and its commands never
	// run. On simulated nodes every image starts, so a quota stands in for an image that
	// never does.
	refusing := cp.RestrictedNamespace(t)
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: refusing, Name: "no-pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}},
	}
	if err := admin.Create(t.Context(), quota); err != nil {
		t.Fatal(err)
	}
	// Another admits pods; there an At is due a long time ago.
	admitting := cp.RestrictedNamespace(t)
	longAgo := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

	var created ledger
	for _, op := range operators {
		op.start(t, created.wrap(op.config(t)), refusing)
	}
	atOperator.start(t, created.wrap(atOperator.config(t)), admitting)
	stuckMemcached := memcachedOperator.object(refusing, "memcached-stuck", 0)
	stuckPodSet := podsetOperator.object(refusing, "podset-stuck", 0)
	refused := newAt(refusing, "refused", time.Now())
	late := newAt(admitting, "late", longAgo)
	failing := newAt(admitting, "failing", time.Now())
	failing.Spec.Command = "exit 1"
	objects := map[string][]client.Object{
		"memcached": {stuckMemcached},
		"podset":    {stuckPodSet},
		"at":        {refused, late, failing},
	}
	for _, objs := range objects {
		for _, obj := range objs {
			if err := admin.Create(t.Context(), obj); err != nil {
				t.Fatal(err)
			}
		}
	}

	// The Deployment controller waits ten minutes before it calls a rollout failed, and
	// neither spec can shorten that: an administrator does, on the Deployments.
	for _, owner := range []client.Object{stuckMemcached, stuckPodSet} {
		await(t, s.limit, func(ctx context.Context) error {
			dep := &appsv1.Deployment{}
			if err := admin.Get(ctx, client.ObjectKeyFromObject(owner), dep); err != nil {
				return err
			}
			before := dep.DeepCopy()
			dep.Spec.ProgressDeadlineSeconds = ptr.To[int32](1)
			return admin.Patch(ctx, dep, client.MergeFrom(before), client.FieldOwner("administrator"))
		})
	}

	// Once every object has been seen to, count its operator's reconciles over a window.
	await(t, s.limit, func(ctx context.Context) error {
		for _, objs := range objects {
			for _, obj := range objs {
				if err := admin.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
					return err
				}
				if len(obj.(conditions.Getter).GetConditions()) == 0 {
					return fmt.Errorf("%s has no status yet", obj.GetName())
				}
			}
		}
		return nil
	})
	before := map[string]float64{}
	for controller := range objects {
		before[controller] = reconciles(controller)
	}
	time.Sleep(s.window)
	// A retry storm is several reconciles a second; this allows one every six seconds
	// over a minute, and ten in a shorter window, which an error's backoff can take.
	perObject := max(10, int(math.Ceil(10*s.window.Minutes())))
	for controller, objs := range objects {
		n := int(reconciles(controller) - before[controller])
		t.Logf("%s: %d reconciles of %d objects in %v", controller, n, len(objs), s.window)
		if n > perObject*len(objs) {
			t.Errorf("%s: %d reconciles of %d objects in %v; want at most %d each", controller, n, len(objs), s.window, perObject)
		}
	}

	for _, tc := range []struct {
		name string
		obj  client.Object
		// says reports whether a condition says why, by its type and reason or its message.
		says func(c metav1.Condition) bool
	}{
		{"a Memcached whose pods never start says its rollout failed", stuckMemcached, func(c metav1.Condition) bool {
			return c.Type == conditions.Degraded && c.Status == metav1.ConditionTrue && c.Reason == "ProgressDeadlineExceeded"
		}},
		{"a PodSet whose pods never start says its rollout failed", stuckPodSet, func(c metav1.Condition) bool {
			return c.Type == conditions.Degraded && c.Status == metav1.ConditionTrue && c.Reason == "ProgressDeadlineExceeded"
		}},
		{"an At whose pod is refused says why", refused, func(c metav1.Condition) bool {
			return strings.Contains(c.Message, "exceeded quota")
		}},
		{"an At whose command fails says so", failing, func(c metav1.Condition) bool {
			return c.Type == at.Succeeded && c.Status == metav1.ConditionFalse && c.Reason == "CommandFailed"
		}},
		{"an At due long ago says so", late, func(c metav1.Condition) bool {
			return strings.Contains(c.Message, late.Spec.Schedule)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := admin.Get(t.Context(), client.ObjectKeyFromObject(tc.obj), tc.obj); err != nil {
				t.Fatal(err)
			}
			conds := tc.obj.(conditions.Getter).GetConditions()
			if !slices.ContainsFunc(conds, tc.says) {
				t.Errorf("no condition says why; the conditions are:%s", describeConditions(conds))
			}
		})
	}
	t.Run("an At due long ago runs nothing", func(t *testing.T) {
		if n := created.count(late.Name); n > 0 {
			t.Errorf("it ran its command, %d years late", time.Since(longAgo)/(365*24*time.Hour))
		}
	})
}

func describeConditions(conds []metav1.Condition) string {
	var b strings.Builder
	for _, c := range conds {
		fmt.Fprintf(&b, "\n\t%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	return b.String()
}
