package reconciletest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/ownership"
	rkreconcile "github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/workload"
)

// stateful is an operator in miniature that owns a StatefulSet: for the ConfigMap named
// settings, a StatefulSet of its name running app:1, written with ownership.Ensure.
var stateful = rkreconcile.For(&corev1.ConfigMap{}, rkreconcile.LogicFunc[*corev1.ConfigMap](
	func(ctx context.Context, cm *corev1.ConfigMap, s rkreconcile.Scope) requeue.Outcome {
		if cm.Name != "settings" {
			return requeue.Done()
		}
		if _, _, err := ownership.Ensure(ctx, s.Writer, cm, statefulSetOf(cm.Namespace, "app:1")); err != nil {
			return requeue.Retry(err)
		}
		return requeue.Done()
	}), "stateful", rkreconcile.WithChildren(&appsv1.StatefulSet{}))

func statefulSetOf(namespace, image string) *appsv1.StatefulSet {
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "settings"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
	}
	return workload.StatefulSet(namespace, "settings", 1, template)
}

// statefulRole is the role of stateful, with the verbs on StatefulSets given.
func statefulRole(t *testing.T, user string, verbs []string) string {
	t.Helper()
	return role(t, user, verbs, "update")
}

// role is the role of stateful, with the verbs given on StatefulSets and on the finalizers
// of their owners, ConfigMaps.
func role(t *testing.T, user string, verbs []string, finalizers string) string {
	t.Helper()
	role := fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: role
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [configmaps/finalizers]
  verbs: [%s]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
- apiGroups: [apps]
  resources: [statefulsets]
  verbs: [%s]
`, finalizers, strings.Join(verbs, ", "))
	path := filepath.Join(t.TempDir(), user+".yaml")
	if err := os.WriteFile(path, []byte(role), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A role that lacks verbs an Ensure of a StatefulSet needs, one or several at once, ends
// the operator's test at the first refusal, whichever client the test waits on (here a
// watch through a client of its own, as the templates' helpers watch), with one marker
// that names exactly the verbs missing: one round of the role fixes it. A refusal that no
// verb of the kind would prevent (admission's, of blockOwnerDeletion to an operator that
// may not update its owner's finalizers) ends it too, with the API server's message and
// the marker of the owner's finalizers. How long the refusal takes to end the test is logged, not asserted.
func TestARefusalEndsTheTestWithOneMarkerOfEveryMissingVerb(t *testing.T) {
	cp := StartAPIServer(t)
	all := []string{"get", "list", "watch", "create", "patch"}
	for i, tc := range []struct {
		name    string
		missing []string
		exists  bool   // the StatefulSet exists with another image: Ensure must patch it
		want    string // the verbs of the marker: those refused, never one the operator does not use
	}{
		{name: "create", missing: []string{"create"}, want: "create"},
		{name: "patch", missing: []string{"patch"}, exists: true, want: "patch"},
		{name: "list and watch", missing: []string{"list", "watch"}, want: "list;watch"},
		{name: "get, create and patch: get, read from the cache, is never asked for", missing: []string{"get", "create", "patch"}, want: "create"},
		{name: "every verb: no rule for the kind", missing: all, want: "list;watch"},
		{name: "none, but the owner's finalizers: admission refuses blockOwnerDeletion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var granted []string
			for _, v := range all {
				if !strings.Contains(" "+strings.Join(tc.missing, " ")+" ", " "+v+" ") {
					granted = append(granted, v)
				}
			}
			user := fmt.Sprintf("stateful-%d", i)
			path := statefulRole(t, user, granted)
			switch {
			case len(tc.missing) == 0:
				path = role(t, user, all, "get") // no update of the finalizers
			case len(granted) == 0:
				path = statefulRole(t, user, []string{"deletecollection"}) // a rule, none of whose verbs Ensure needs
			}
			op := &Operator{User: user, Role: path, Controllers: []rkreconcile.Declaration{stateful}, ControlPlane: cp}
			if err := op.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = op.Stop() })

			rec := &recordingTB{TB: t}
			e := op.Env(rec)
			var (
				mu      sync.Mutex
				refused time.Time // when the operator first heard a refusal
			)
			e.Config = Intercept(e.Config, func(r *Request) (*http.Response, error) {
				resp, err := r.Send()
				if err == nil && resp.StatusCode == http.StatusForbidden {
					mu.Lock()
					if refused.IsZero() {
						refused = time.Now()
					}
					mu.Unlock()
				}
				return resp, err
			})
			settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "settings"}}
			if err := e.Create(t.Context(), settings); err != nil {
				t.Fatal(err)
			}
			if tc.exists {
				old := statefulSetOf(e.Namespace, "app:0")
				old.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(settings, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}
				if err := e.Create(t.Context(), old); err != nil {
					t.Fatal(err)
				}
			}

			start := time.Now()
			var ended time.Time
			done := make(chan struct{})
			go func() {
				defer close(done)
				defer func() { ended = time.Now() }()
				e.Run(rec)
				followStatefulSet(rec, cp, e.Namespace, "app:1")
			}()
			<-done

			report := rec.String()
			mu.Lock()
			sinceRefusal := ended.Sub(refused)
			mu.Unlock()
			t.Logf("the test ended %s after the operator started, %s after its first refusal, and said:\n%s",
				ended.Sub(start).Round(time.Millisecond), sinceRefusal.Round(time.Millisecond), report)
			if !rec.stopped {
				t.Errorf("the test went on; want it stopped")
			}
			if len(tc.missing) == 0 {
				if want := "its role allows it, but admission refused it: "; !strings.Contains(report, want) || !strings.Contains(report, "blockOwnerDeletion") {
					t.Errorf("the report does not say %q and the API server's message", want)
				}
				if want := `// +kubebuilder:rbac:groups="",resources=configmaps/finalizers,verbs=update`; !strings.Contains(report, want) {
					t.Errorf("the report does not name the owner's finalizers with %q", want)
				}
				return
			}
			want := `// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=` + tc.want + "\n"
			if !strings.Contains(report+"\n", want) {
				t.Errorf("the report does not name exactly the missing verbs with %q", want)
			}
			if n := strings.Count(report, "+kubebuilder:rbac"); n != 1 {
				t.Errorf("the report names %d markers; want 1", n)
			}
		})
	}
}

// followStatefulSet waits, as a template's helper does, on a watch through a client of its
// own until the StatefulSet settings runs image.
func followStatefulSet(t testing.TB, cp *ControlPlane, namespace, image string) {
	watcher, err := client.NewWithWatch(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := watcher.Watch(context.Background(), &appsv1.StatefulSetList{}, client.InNamespace(namespace))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("the watch ended")
			}
			sts, ok := ev.Object.(*appsv1.StatefulSet)
			if !ok {
				t.Fatalf("the watch said %s: %v", ev.Type, ev.Object)
			}
			if sts.Name == "settings" && sts.Spec.Template.Spec.Containers[0].Image == image {
				return
			}
		case <-deadline:
			t.Fatalf("no StatefulSet runs %s after 2 minutes", image)
		}
	}
}

// A test that provokes a refusal on purpose says so with AllowRefusals: the refusal then
// neither fails it nor stops it, and its watches go on.
func TestAllowRefusalsLetsATestProvokeARefusal(t *testing.T) {
	cp := StartAPIServer(t)
	op := &Operator{User: "provoker", Role: statefulRole(t, "provoker", []string{"get", "list", "watch", "patch"}),
		Controllers: []rkreconcile.Declaration{stateful}, ControlPlane: cp}
	if err := op.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Stop() })
	rec := &recordingTB{TB: t}
	e := op.Env(rec)
	e.AllowRefusals()
	refused := make(chan struct{})
	var once sync.Once
	e.Config = Intercept(e.Config, func(r *Request) (*http.Response, error) {
		resp, err := r.Send()
		if err == nil && resp.StatusCode == http.StatusForbidden {
			once.Do(func() { close(refused) })
		}
		return resp, err
	})
	if err := e.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "settings"}}); err != nil {
		t.Fatal(err)
	}
	e.Run(rec)
	<-refused
	// The refusal is in the audit log within milliseconds; give it ten times as long.
	time.Sleep(500 * time.Millisecond)
	var list appsv1.StatefulSetList
	if err := e.List(t.Context(), &list, client.InNamespace(e.Namespace)); err != nil {
		t.Errorf("the test's client after an allowed refusal: %v", err)
	}
	if rec.stopped || rec.String() != "" {
		t.Errorf("an allowed refusal stopped=%v the test, which said %q", rec.stopped, rec.String())
	}
}
