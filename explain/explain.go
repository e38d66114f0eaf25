// Package explain tells why an object is not done. kstatus, `kubectl wait` and an object's
// conditions say that it is not Ready; the reason is often further down, in what it
// controls: a Memcached Reconciling because its Deployment is Progressing because a pod
// cannot pull its image. Object walks from an object through the objects it controls, by
// owner references, down to their pods, reads each one's kstatus verdict, conditions and
// recent Warning events, and reports the chains that hold it back, leaf first:
//
//	Pod web-5d8f-x2x: ImagePullBackOff (image memcached:nope) -> ReplicaSet web-5d8f: Progressing (Ready: 0/1) -> Deployment web: Progressing (Ready: 0/1) -> Memcached web: Reconciling (...)
//
// It works on any kind whose status kstatus reads, not only reconcilekit's. The command
// cmd/kubectl-reconcilekit prints it as `kubectl reconcilekit explain KIND/NAME`.
package explain

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// recentEvents is how many Warning events of each object a report keeps: the latest say
// what is wrong now.
const recentEvents = 3

// listers is how many resources are listed at a time while looking for children.
const listers = 8

// Object explains the object ref names, KIND/NAME as kubectl takes it ("memcached/cache",
// "memcacheds/cache", "deploy/web", "deployments.apps/web"), in namespace ("" is
// "default"; ignored for a cluster-scoped kind), read with cfg.
//
// Children are the objects whose controller owner reference has the parent's UID. To find
// them it lists, as metadata only, every resource of the object's namespace that can be
// listed (across all namespaces for a cluster-scoped object), once, then reads in full only
// the objects of the tree.
func Object(ctx context.Context, cfg *rest.Config, namespace, ref string) (*Report, error) {
	c, err := newClients(cfg)
	if err != nil {
		return nil, err
	}
	gvr, name, err := c.resolve(ref)
	if err != nil {
		return nil, err
	}
	namespaced, err := c.namespaced(gvr)
	if err != nil {
		return nil, err
	}
	switch {
	case !namespaced:
		namespace = metav1.NamespaceAll
	case namespace == "":
		namespace = metav1.NamespaceDefault
	}
	root, err := c.dynamic.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}

	children, unlisted, err := c.controlled(ctx, namespace, !namespaced)
	if err != nil {
		return nil, err
	}
	events, err := c.warnings(ctx, namespace)
	if err != nil {
		return nil, err
	}
	w := walk{clients: c, children: children, events: events, seen: map[types.UID]bool{}}
	tree, err := w.node(ctx, root)
	if err != nil {
		return nil, err
	}
	r := NewReport(tree)
	r.Unlisted = unlisted
	return r, nil
}

// clients are what Object reads the cluster with.
type clients struct {
	dynamic   dynamic.Interface
	metadata  metadata.Interface
	discovery discovery.CachedDiscoveryInterface
	mapper    meta.RESTMapper
	core      corev1client.CoreV1Interface
}

func newClients(cfg *rest.Config) (*clients, error) {
	// Listing every resource lists deprecated ones (v1 Endpoints), and the API server
	// warns of each: noise to whoever asked for an explanation.
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = rest.NoWarnings{}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	c := &clients{discovery: memory.NewMemCacheClient(dc)}
	c.mapper = restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(c.discovery), c.discovery, nil)
	if c.dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	if c.metadata, err = metadata.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	if c.core, err = corev1client.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	return c, nil
}

// resolve finds the resource and name of KIND/NAME as kubectl does: KIND may be a
// resource, its singular or short name, or a kind, qualified by version and group or not.
func (c *clients) resolve(ref string) (schema.GroupVersionResource, string, error) {
	kind, name, ok := strings.Cut(ref, "/")
	if !ok || kind == "" || name == "" || strings.Contains(name, "/") {
		return schema.GroupVersionResource{}, "", fmt.Errorf("explain: %q: want KIND/NAME, such as memcached/cache or deploy/web", ref)
	}
	full, partial := schema.ParseResourceArg(strings.ToLower(kind))
	if full != nil {
		if gvr, err := c.mapper.ResourceFor(*full); err == nil {
			return gvr, name, nil
		}
	}
	gvr, err := c.mapper.ResourceFor(partial.WithVersion(""))
	if err != nil {
		return schema.GroupVersionResource{}, "", fmt.Errorf("explain: the server does not know %q: %w", kind, err)
	}
	return gvr, name, nil
}

// namespaced is whether gvr's objects live in namespaces.
func (c *clients) namespaced(gvr schema.GroupVersionResource) (bool, error) {
	gvk, err := c.mapper.KindFor(gvr)
	if err != nil {
		return false, fmt.Errorf("explain: %w", err)
	}
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return false, fmt.Errorf("explain: %w", err)
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// child is an object found controlled by another, by its resource and name.
type child struct {
	gvr             schema.GroupVersionResource
	namespace, name string
}

// controlled lists the metadata of every listable resource of namespace (and the
// cluster-scoped ones too if cluster) and indexes the objects by the UID of their
// controller. It returns the resources it could not list, as resource.group.
func (c *clients) controlled(ctx context.Context, namespace string, cluster bool) (map[types.UID][]child, []string, error) {
	var lists []*metav1.APIResourceList
	var err error
	if cluster {
		lists, err = discovery.ServerPreferredResources(c.discovery)
	} else {
		lists, err = discovery.ServerPreferredNamespacedResources(c.discovery)
	}
	// A group that fails discovery (an aggregated API that is down) leaves the others.
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, nil, fmt.Errorf("explain: discovering the resources: %w", err)
	}
	var resources []schema.GroupVersionResource
	for _, l := range discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list"}}, lists) {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			// Events own nothing, and a namespace may hold thousands.
			if r.Name == "events" || strings.Contains(r.Name, "/") {
				continue
			}
			resources = append(resources, gv.WithResource(r.Name))
		}
	}

	var (
		mu       sync.Mutex
		index    = map[types.UID][]child{}
		unlisted []string
		wg       sync.WaitGroup
		slots    = make(chan struct{}, listers)
	)
	for _, gvr := range resources {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			list, err := c.metadata.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				unlisted = append(unlisted, gvr.GroupResource().String())
				return
			}
			for _, item := range list.Items {
				if owner := metav1.GetControllerOfNoCopy(&item); owner != nil {
					index[owner.UID] = append(index[owner.UID], child{gvr, item.Namespace, item.Name})
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	slices.Sort(unlisted)
	return index, unlisted, nil
}

// warnings reads the Warning events of namespace, by the UID of the object they regard,
// newest first. Events written through events.k8s.io are read here too: both APIs serve the
// same objects.
func (c *clients) warnings(ctx context.Context, namespace string) (map[types.UID][]Event, error) {
	list, err := c.core.Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "type=" + corev1.EventTypeWarning})
	if err != nil {
		return nil, fmt.Errorf("explain: listing events: %w", err)
	}
	byObject := map[types.UID][]Event{}
	for _, e := range list.Items {
		uid := e.InvolvedObject.UID
		byObject[uid] = append(byObject[uid], Event{Reason: e.Reason, Message: e.Message, Count: count(&e), Last: last(&e)})
	}
	for _, events := range byObject {
		slices.SortStableFunc(events, func(a, b Event) int { return b.Last.Compare(a.Last) })
	}
	return byObject, nil
}

// recent returns the latest of events, newest first, that are not history: an event
// older than the object's latest change of state, the latest transition of its
// conditions, is left out (a pod's FailedScheduling once it is scheduled), with a second
// of slack, since conditions keep whole seconds.
func recent(events []Event, u *unstructured.Unstructured) []Event {
	var changed time.Time
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		s, _ := m["lastTransitionTime"].(string)
		if t, err := time.Parse(time.RFC3339, s); err == nil && t.After(changed) {
			changed = t
		}
	}
	var kept []Event
	for _, e := range events {
		if len(kept) < recentEvents && !e.Last.Add(time.Second).Before(changed) {
			kept = append(kept, e)
		}
	}
	return kept
}

// count is how many times an event happened, whichever API recorded it.
func count(e *corev1.Event) int32 {
	if e.Series != nil {
		return e.Series.Count
	}
	return max(e.Count, 1)
}

// last is when an event last happened, whichever API recorded it.
func last(e *corev1.Event) time.Time {
	t := e.CreationTimestamp.Time
	for _, u := range []time.Time{e.LastTimestamp.Time, e.EventTime.Time} {
		if u.After(t) {
			t = u
		}
	}
	if e.Series != nil && e.Series.LastObservedTime.After(t) {
		t = e.Series.LastObservedTime.Time
	}
	return t.UTC()
}

// walk builds the tree under an object from the index of who controls what.
type walk struct {
	*clients
	children map[types.UID][]child
	events   map[types.UID][]Event
	seen     map[types.UID]bool // against a cycle of owner references
}

// node reads u's verdict and its children's, recursively. A child deleted since it was
// listed is left out.
func (w *walk) node(ctx context.Context, u *unstructured.Unstructured) (*Node, error) {
	w.seen[u.GetUID()] = true
	n := &Node{Verdict: VerdictOf(u)}
	n.Events = recent(w.events[u.GetUID()], u)
	for _, ch := range w.children[u.GetUID()] {
		obj, err := w.dynamic.Resource(ch.gvr).Namespace(ch.namespace).Get(ctx, ch.name, metav1.GetOptions{})
		if err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("explain: reading %s %s: %w", ch.gvr.Resource, ch.name, err)
		}
		if w.seen[obj.GetUID()] {
			continue
		}
		c, err := w.node(ctx, obj)
		if err != nil {
			return nil, err
		}
		n.Children = append(n.Children, c)
	}
	slices.SortFunc(n.Children, func(a, b *Node) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return n, nil
}
