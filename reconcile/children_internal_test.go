package reconcile

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// What the watch of a child tells the memory of the owner's writes: an event clears a
// write it shows, and only such a one.
func TestAChildsEventClearsOnlyTheWritesItShows(t *testing.T) {
	secrets := corev1.SchemeGroupVersion.WithKind("Secret")
	owner := types.NamespacedName{Namespace: "ns", Name: "owner"}
	secret := func(rv string, uid types.UID, deleting bool) client.Object {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "child", ResourceVersion: rv, UID: uid}}
		if deleting {
			s.DeletionTimestamp = &metav1.Time{}
		}
		return s
	}
	for _, tc := range []struct {
		name    string
		write   childWrite
		event   client.Object
		gone    bool
		cleared bool
	}{
		{"a create, the event of an older version", childWrite{rv: "10", uid: "a"}, secret("9", "a", false), false, false},
		{"a create, the event of its version", childWrite{rv: "10", uid: "a"}, secret("10", "a", false), false, true},
		{"a create, the event of a later change", childWrite{rv: "10", uid: "a"}, secret("12", "a", false), false, true},
		{"a create, the child deleted since", childWrite{rv: "10", uid: "a"}, secret("11", "a", false), true, true},
		{"a create, an earlier child of the name deleted", childWrite{rv: "10", uid: "b"}, secret("8", "a", false), true, false},
		{"a deletion, the child still there", childWrite{deleted: true, uid: "a"}, secret("9", "a", false), false, false},
		{"a deletion, the child being deleted", childWrite{deleted: true, uid: "a"}, secret("11", "a", true), false, true},
		{"a deletion, the child gone", childWrite{deleted: true, uid: "a"}, secret("11", "a", false), true, true},
		{"a deletion, another child of the name", childWrite{deleted: true, uid: "a"}, secret("12", "b", false), false, true},
		{"a resourceVersion that is not a number", childWrite{rv: "x1", uid: "a"}, secret("x0", "a", false), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newChildren()
			w := tc.write
			w.childKey = childKey{secrets, types.NamespacedName{Namespace: "ns", Name: "child"}}
			c.wrote(owner, []childWrite{w}, time.Now())
			c.seen(secrets, tc.event, tc.gone)
			if _, pending := c.pending[owner][w.childKey]; pending == tc.cleared {
				t.Errorf("pending after the event: %v; want %v", pending, !tc.cleared)
			}
		})
	}
}

// Before a reconcile the cache is asked too (its event may have come before the write was
// recorded), and a write waited for longer than the timeout is given up.
func TestAnOwnerWaitsForTheCacheNoLongerThanTheTimeout(t *testing.T) {
	secrets := corev1.SchemeGroupVersion.WithKind("Secret")
	owner := types.NamespacedName{Namespace: "ns", Name: "owner"}
	key := childKey{secrets, types.NamespacedName{Namespace: "ns", Name: "child"}}
	newChild := func(gvk schema.GroupVersionKind) (client.Object, error) {
		o, err := clientgoscheme.Scheme.New(gvk)
		return o.(client.Object), err
	}
	cached := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "child"}}
	cache := fake.NewClientBuilder().WithObjects(cached).Build() // resourceVersion 999
	start := time.Now()
	for _, tc := range []struct {
		name   string
		write  childWrite
		cache  client.Reader
		now    time.Time
		behind bool
	}{
		{"the cache at the write", childWrite{childKey: key, rv: "999"}, cache, start, false},
		{"the cache behind the write", childWrite{childKey: key, rv: "1000"}, cache, start.Add(time.Second), true},
		{"the cache behind, past the timeout", childWrite{childKey: key, rv: "1000"}, cache, start.Add(10 * time.Second), false},
		{"a create the cache has yet to hold", childWrite{childKey: key, rv: "5"}, fake.NewClientBuilder().Build(), start, true},
		{"a deletion the cache shows", childWrite{childKey: key, deleted: true}, fake.NewClientBuilder().Build(), start, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newChildren()
			c.wrote(owner, []childWrite{tc.write}, start)
			wait, behind := c.behind(context.Background(), tc.cache, newChild, owner, tc.now, 10*time.Second)
			if behind != tc.behind || behind && wait != 10*time.Second-tc.now.Sub(start) {
				t.Errorf("behind %v, wait %v; want behind %v", behind, wait, tc.behind)
			}
			if _, pending := c.pending[owner]; pending != tc.behind {
				t.Errorf("still remembered: %v; want %v", pending, tc.behind)
			}
		})
	}
}

// The noting layer of the Writer's client notes every accepted write of a child, and
// nothing of another kind or of a refused write.
func TestTheWritersClientNotesTheChildrenWritten(t *testing.T) {
	ctx := context.Background()
	base := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build()
	var wrote []childWrite
	c := notingClient(base, []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}, &wrote)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "child"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, cm.DeepCopy()); err == nil {
		t.Fatal("a second create of the child succeeded")
	}
	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if len(wrote) != 2 || wrote[0].deleted || wrote[0].rv == "" || !wrote[1].deleted || wrote[0].Name != "child" {
		t.Errorf("wrote = %+v; want the ConfigMap's create then its deletion", wrote)
	}
}

// Every way the Writer's client writes a child is noted: Ensure applies its children, and a
// logic may write a child's status; a typed apply configuration, which does not say the
// resourceVersion it left, and a write of another kind are not.
func TestTheWritersClientNotesEveryWriteOfAChild(t *testing.T) {
	configMaps := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	applied := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(configMaps)
		u.SetNamespace("ns")
		u.SetName(name)
		return u
	}
	for _, tc := range []struct {
		name  string
		write func(context.Context, client.Client) error
		want  []string // the names noted
	}{
		{"an apply of an object's configuration", func(ctx context.Context, c client.Client) error {
			return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied("applied")), client.FieldOwner("test"))
		}, []string{"applied"}},
		{"a typed apply configuration", func(ctx context.Context, c client.Client) error {
			return c.Apply(ctx, corev1ac.ConfigMap("typed", "ns"), client.FieldOwner("test"))
		}, nil},
		{"a status update", func(ctx context.Context, c client.Client) error {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pod"}}
			if err := c.Create(ctx, pod); err != nil {
				return err
			}
			pod.Status.Phase = corev1.PodRunning
			return c.Status().Update(ctx, pod)
		}, []string{"pod", "pod"}},
		{"a status patch of another kind", func(ctx context.Context, c client.Client) error {
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc"}}
			if err := c.Create(ctx, svc); err != nil {
				return err
			}
			before := svc.DeepCopy()
			svc.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up", LastTransitionTime: metav1.Now()}}
			return c.Status().Patch(ctx, svc, client.MergeFrom(before))
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithStatusSubresource(&corev1.Pod{}, &corev1.Service{}).Build()
			var wrote []childWrite
			c := notingClient(base, []schema.GroupVersionKind{configMaps, corev1.SchemeGroupVersion.WithKind("Pod")}, &wrote)
			if err := tc.write(t.Context(), c); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range wrote {
				if w.rv == "" {
					t.Errorf("%s noted without a resourceVersion", w.Name)
				}
				got = append(got, w.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("noted %q; want %q", got, tc.want)
			}
		})
	}
}
