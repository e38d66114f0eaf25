package reliability

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	atv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
)

// subject is an object to delete, with the means to do it.
type subject struct {
	op          *operator
	obj         client.Object
	trap        *trap // on the operator's writes
	create, del func()
}

// child names the write that creates what the subject's operator makes for it.
func (s subject) child() string { return s.op.child + "/" + s.obj.GetName() }

// moment creates a subject and deletes it at one moment of its life.
type moment func(t *testing.T, s subject)

func TestDeletionAtEveryPhaseLeavesNothingBehind(t *testing.T) {
	limit := sized().limit
	admin := cp.Client(t, scheme)
	ns := cp.RestrictedNamespace(t)

	var (
		whileCreatingChild moment = func(t *testing.T, s subject) {
			s.trap.whenSent(s.child(), s.del)
			s.create()
		}
		onceChildCreated moment = func(t *testing.T, s subject) {
			s.trap.whenAnswered(s.child(), s.del)
			s.create()
		}
		onceConverged moment = func(t *testing.T, s subject) {
			s.create()
			await(t, limit, func(ctx context.Context) error { return converged(ctx, admin, ns, s.op) })
			s.del()
		}
		whilePending moment = func(t *testing.T, s subject) {
			at := s.obj.(*atv1alpha1.At)
			at.Spec.Schedule = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
			s.create()
			await(t, limit, func(ctx context.Context) error {
				if err := admin.Get(ctx, client.ObjectKeyFromObject(at), at); err != nil {
					return err
				}
				if at.Status.Phase != atv1alpha1.PhasePending {
					return fmt.Errorf("phase %q", at.Status.Phase)
				}
				return nil
			})
			s.del()
		}
		onceRunningIsRecorded moment = func(t *testing.T, s subject) {
			s.trap.whenAnswered("ats/status/"+s.obj.GetName(), s.del)
			s.create()
		}
	)

	foreground := client.PropagationPolicy(metav1.DeletePropagationForeground)
	cases := []struct {
		op     *operator
		when   string
		delete moment
		policy client.PropagationPolicy // empty for the server's default, in the background
	}{
		{memcachedOperator, "while its Deployment is being created", whileCreatingChild, ""},
		{memcachedOperator, "while its Deployment rolls out", onceChildCreated, ""},
		{memcachedOperator, "once Available", onceConverged, ""},
		{memcachedOperator, "once Available, in the foreground", onceConverged, foreground},
		{podsetOperator, "while its Deployment is being created", whileCreatingChild, ""},
		{podsetOperator, "while its Deployment rolls out", onceChildCreated, ""},
		{podsetOperator, "once Available", onceConverged, ""},
		{podsetOperator, "once Available, in the foreground", onceConverged, foreground},
		{atOperator, "while PENDING", whilePending, ""},
		{atOperator, "while its pod is being created", whileCreatingChild, ""},
		{atOperator, "once its pod exists, before RUNNING is recorded", onceChildCreated, ""},
		{atOperator, "once RUNNING is recorded", onceRunningIsRecorded, ""},
		{atOperator, "once DONE", onceConverged, ""},
		{atOperator, "once DONE, in the foreground", onceConverged, foreground},
	}

	var created ledger
	traps := map[*operator]*trap{}
	for _, op := range operators {
		traps[op] = &trap{}
		op.start(t, traps[op].wrap(created.wrap(op.config(t))), ns)
	}
	for i, tc := range cases {
		t.Run(tc.op.name+" deleted "+tc.when, func(t *testing.T) {
			obj := tc.op.object(ns, fmt.Sprintf("%s-%d", tc.op.name, i), 0)
			deleted := make(chan error, 1)
			create := func() {
				if err := admin.Create(t.Context(), obj); err != nil {
					t.Fatal(err)
				}
			}
			// A trap deletes from within the operator's request: by name, so as not to share
			// obj with the test, and without waiting on it.
			victim := tc.op.empty()
			victim.SetNamespace(obj.GetNamespace())
			victim.SetName(obj.GetName())
			del := func() {
				var opts []client.DeleteOption
				if tc.policy != "" {
					opts = append(opts, tc.policy)
				}
				deleted <- admin.Delete(context.Background(), victim, opts...)
			}
			tc.delete(t, subject{op: tc.op, obj: obj, trap: traps[tc.op], create: create, del: del})
			select {
			case err := <-deleted:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(limit):
				t.Fatalf("the moment to delete never came within %v", limit)
			}
			await(t, limit, func(ctx context.Context) error { return leftBehind(ctx, admin, obj) })
		})
	}
	created.check(t)
}

// leftBehind describes what remains of a deleted object: itself, what its operator made
// for it, or their pods.
func leftBehind(ctx context.Context, c client.Client, obj client.Object) error {
	key := client.ObjectKeyFromObject(obj)
	for _, o := range []client.Object{obj.DeepCopyObject().(client.Object), &appsv1.Deployment{}, &corev1.Pod{}} {
		if err := c.Get(ctx, key, o); !apierrors.IsNotFound(err) {
			return fmt.Errorf("%T %s is still there (%v)", o, key.Name, err)
		}
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(key.Namespace), client.MatchingLabels{"app.kubernetes.io/instance": key.Name}); err != nil {
		return err
	}
	if len(pods.Items) > 0 {
		return fmt.Errorf("%d of its pods are still there", len(pods.Items))
	}
	return nil
}
