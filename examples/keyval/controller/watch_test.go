package controller_test

import (
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storev1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
)

// watchFrom starts a watch of the test's namespace through a client of its own, ended with
// the test, of list's kind, of the objects opts select.
func (e *env) watchFrom(t *testing.T, list client.ObjectList, opts ...client.ListOption) watch.Interface {
	t.Helper()
	watcher, err := client.NewWithWatch(operator.ControlPlane.Config, client.Options{Scheme: operator.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := watcher.Watch(t.Context(), list, append([]client.ListOption{client.InNamespace(e.Namespace)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

// follow watches the Keyval from before act until a version satisfies done, and returns
// the versions it saw after act, the first of which may be the one before it.
func (e *env) follow(t *testing.T, kv *storev1alpha1.Keyval, act func(), done func(*storev1alpha1.Keyval) bool) []*storev1alpha1.Keyval {
	t.Helper()
	w := e.watchFrom(t, &storev1alpha1.KeyvalList{}, client.MatchingFields{"metadata.name": kv.Name})
	defer w.Stop()
	act()
	generation := kv.Generation // act's patch read the new one into kv

	var versions []*storev1alpha1.Keyval
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("the watch ended after %d versions", len(versions))
			}
			seen, ok := ev.Object.(*storev1alpha1.Keyval)
			if !ok {
				t.Fatalf("the watch said %s: %v", ev.Type, ev.Object)
			}
			versions = append(versions, seen)
			if seen.Generation >= generation && done(seen) {
				return versions
			}
		case <-deadline:
			t.Fatalf("no version is done after 2 minutes, of %d", len(versions))
		}
	}
}

// watchPods watches the Keyval's pods until the test ends; the function it returns lists
// every pod seen so far, by UID: its name, the StatefulSet revision it was made from, the
// phase it was last seen in, and whether it was deleted.
func (e *env) watchPods(t *testing.T, kv *storev1alpha1.Keyval) func() map[types.UID]podMade {
	t.Helper()
	w := e.watchFrom(t, &corev1.PodList{}, client.MatchingLabels{"app.kubernetes.io/instance": kv.Name})
	var mu sync.Mutex
	seen := map[types.UID]podMade{}
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				mu.Lock()
				seen[p.UID] = podMade{
					name:     p.Name,
					revision: p.Labels[appsv1.ControllerRevisionHashLabelKey],
					phase:    p.Status.Phase,
					deleted:  ev.Type == watch.Deleted,
				}
				mu.Unlock()
			}
		}
	}()
	return func() map[types.UID]podMade {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(seen)
	}
}

// podMade is a pod as watchPods last saw it.
type podMade struct {
	name, revision string
	phase          corev1.PodPhase
	deleted        bool
}

// served tells whether the pod ran and did not end on its own: a server that served. The
// StatefulSet controller at times deletes a pod it has just made, still Pending, and makes
// it again, and replaces one that ended; neither restarts a server that served.
func (p podMade) served() bool { return p.phase == corev1.PodRunning }

func (p podMade) String() string {
	s := fmt.Sprintf("%s(%s, %s", p.name, p.revision, p.phase)
	if p.deleted {
		s += ", deleted"
	}
	return s + ")"
}
