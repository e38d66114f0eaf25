package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/internal/fight"
	"github.com/reconcilekit/reconcilekit/internal/statusfield"
	"github.com/reconcilekit/reconcilekit/internal/telemetry"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// observer keeps the shell's metrics of one kind: reconcilekit_condition, from the objects
// its source holds, and the detector of status writes that change nothing.
type observer struct {
	kind     string
	gvk      schema.GroupVersionKind // unknown without a scheme: fights then name no fields
	source   objects                 // the objects of the kind, for reconcilekit_condition
	active   atomic.Bool             // it has reconciled: a replica standing by reports nothing
	statuses fight.Detector
	options  *options
}

func newObserver(c client.Client, obj client.Object, o *options) *observer {
	m := &observer{kind: reflect.TypeOf(obj).Elem().Name(), options: o}
	if c != nil && c.Scheme() != nil {
		if gvk, err := apiutil.GVKForObject(obj, c.Scheme()); err == nil {
			m.kind, m.gvk = gvk.Kind, gvk
			if c.Scheme().Recognizes(gvk.GroupVersion().WithKind(gvk.Kind + "List")) {
				m.source = listed{c, c.Scheme(), gvk.GroupVersion().WithKind(gvk.Kind + "List")}
			}
		}
	}
	return m
}

// observe counts the reconcile of obj by its outcome. It returns the outcome, with a
// fight's error given its back-off as a delay, so that the next write waits for it instead
// of feeding the fight.
func (m *observer) observe(outcome requeue.Outcome) requeue.Outcome {
	if wait, ok := ownership.FightBackoff(outcome.Err()); ok && !outcome.IsTerminal() {
		outcome = requeue.RetryAfter(outcome.Err(), wait)
	}
	m.active.Store(true)
	telemetry.Reconciles.WithLabelValues(m.kind, outcomeLabel(outcome)).Inc()
	return outcome
}

// objects are the objects of one kind that a shell reconciles.
type objects interface {
	// each calls f for every object, which f must not change.
	each(ctx context.Context, f func(client.Object)) error
}

// cached are the objects of a kind in the manager's cache, read from the informer's store
// as they are, without a copy: a scrape then costs no more than a pointer an object. A
// cache of several namespaces has an informer for each, and no one store: its objects are
// listed, each struct copied but not what it points to.
type cached struct {
	cache  cache.Cache
	object client.Object
	listed objects
}

func (c cached) each(ctx context.Context, f func(client.Object)) error {
	informer, err := c.cache.GetInformer(ctx, c.object, cache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	store, ok := informer.(interface{ GetStore() toolscache.Store })
	if !ok {
		if c.listed == nil {
			return fmt.Errorf("the cache's informer of %T, a %T, has no store", c.object, informer)
		}
		return c.listed.each(ctx, f)
	}
	for _, item := range store.GetStore().List() {
		if obj, ok := item.(client.Object); ok {
			f(obj)
		}
	}
	return nil
}

// listed are the objects of a kind listed through a reader: a shell without a manager's
// cache (Controller.Reconciler).
type listed struct {
	reader client.Reader
	scheme *runtime.Scheme
	list   schema.GroupVersionKind
}

func (l listed) each(ctx context.Context, f func(client.Object)) error {
	obj, err := l.scheme.New(l.list)
	if err != nil {
		return err
	}
	list, ok := obj.(client.ObjectList)
	if !ok {
		return fmt.Errorf("%s is not a list", l.list)
	}
	if err := l.reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	return meta.EachListItem(list, func(item runtime.Object) error {
		if obj, ok := item.(client.Object); ok {
			f(obj)
		}
		return nil
	})
}

// conditionSeries serves reconcilekit_condition when scraped, from the objects of each live
// observer's kind as its shell's cache holds them. A GaugeVec would keep a metric with
// label pairs of its own for every condition of every object, about 2 KiB an object of five
// conditions, and a copy of the conditions kept for the series about 170 bytes: the cache
// holds the objects anyway, and a scrape builds the series only while it reads them.
var conditionSeries = &conditionCollector{desc: prometheus.NewDesc("reconcilekit_condition",
	"1 for each condition of each object the shell reconciles, by the condition's type and status; gone when the object is.",
	[]string{"kind", "namespace", "name", "type", "status"}, nil)}

// register makes m's conditions part of reconcilekit_condition, and registers the library's
// series on controller-runtime's registry if no manager of the process has yet.
func register(m *observer) error {
	if err := telemetry.Register(conditionSeries); err != nil {
		return err
	}
	conditionSeries.add(m)
	return nil
}

// conditionCollector collects reconcilekit_condition from the observers of the shells
// alive: an observer whose shell is gone is dropped with it.
type conditionCollector struct {
	desc      *prometheus.Desc
	mu        sync.Mutex
	observers []weak.Pointer[observer] // oldest first
}

func (c *conditionCollector) add(m *observer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.observers = append(c.observers, weak.Make(m))
}

// alive returns the observers alive, newest first, and forgets the others.
func (c *conditionCollector) alive() []*observer {
	c.mu.Lock()
	defer c.mu.Unlock()
	var alive []*observer
	kept := c.observers[:0]
	for _, w := range c.observers {
		if m := w.Value(); m != nil {
			alive = append(alive, m)
			kept = append(kept, w)
		}
	}
	clear(c.observers[len(kept):])
	c.observers = kept
	slices.Reverse(alive)
	return alive
}

// Describe sends the one description of reconcilekit_condition.
func (c *conditionCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// scrapeTimeout bounds a scrape's reading of the objects: a shell without a cache lists
// them from the API server.
const scrapeTimeout = 10 * time.Second

// Collect sends a series for each condition of each object of the observers that have
// reconciled, an object being deleted left out. An object that two shells of one kind hold
// (a manager started again in one process) is reported once, as the newest holds it.
func (c *conditionCollector) Collect(ch chan<- prometheus.Metric) {
	observers := c.alive()
	shells := map[string]int{}
	for _, m := range observers {
		shells[m.kind]++
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	// The objects reported of each kind that more than one shell reconciles.
	reported := map[string]sets.Set[types.UID]{}
	pairs := labelPairs{}
	for _, m := range observers {
		if !m.active.Load() || m.source == nil {
			continue
		}
		done, shared := reported[m.kind]
		if !shared && shells[m.kind] > 1 {
			done = sets.New[types.UID]()
			reported[m.kind] = done
		}
		_ = m.source.each(ctx, func(obj client.Object) { // a source that fails reports nothing until it answers
			s, ok := obj.(conditions.Getter)
			if !ok || !obj.GetDeletionTimestamp().IsZero() {
				return
			}
			if done != nil {
				if done.Has(obj.GetUID()) {
					return
				}
				done.Insert(obj.GetUID())
			}
			namespace, name := obj.GetNamespace(), obj.GetName()
			nameLabel := &dto.LabelPair{Name: &labelName, Value: &name}
			for _, cond := range s.GetConditions() {
				ch <- &conditionMetric{desc: c.desc, labels: [...]*dto.LabelPair{ // sorted by name
					pairs.of(&labelKind, m.kind), nameLabel, pairs.of(&labelNamespace, namespace),
					pairs.of(&labelStatus, string(cond.Status)), pairs.of(&labelType, cond.Type),
				}}
			}
		})
	}
}

// The label names of reconcilekit_condition.
var labelKind, labelName, labelNamespace, labelStatus, labelType = "kind", "name", "namespace", "status", "type"

// labelPairs hands out one label pair for each label and value, for the series of one
// scrape to share.
type labelPairs map[[2]string]*dto.LabelPair

func (p labelPairs) of(name *string, value string) *dto.LabelPair {
	pair, ok := p[[2]string{*name, value}]
	if !ok {
		pair = &dto.LabelPair{Name: name, Value: &value}
		p[[2]string{*name, value}] = pair
	}
	return pair
}

// conditionMetric is one series of reconcilekit_condition, at 1.
type conditionMetric struct {
	desc   *prometheus.Desc
	labels [5]*dto.LabelPair
}

// one is the value of every conditionMetric, read only.
var one = &dto.Gauge{Value: new(1.0)}

func (m *conditionMetric) Desc() *prometheus.Desc { return m.desc }

func (m *conditionMetric) Write(out *dto.Metric) error {
	out.Label, out.Gauge = m.labels[:], one
	return nil
}

func outcomeLabel(o requeue.Outcome) string {
	err := o.Err()
	switch {
	case isQuiet(err):
		return telemetry.Conflict
	case o.IsTerminal():
		return telemetry.Terminal
	case err != nil:
		return telemetry.Retry
	case o.IsDone():
		return telemetry.Done
	}
	return telemetry.After
}

// observedClient is the shell's client, counting the writes it sends and watching its
// status writes for fights.
type observedClient struct {
	client.Client
	m *observer
}

// Patch counts a metadata write, and whether it changed the object.
func (c observedClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	rv := obj.GetResourceVersion()
	if err := c.Client.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	telemetry.Wrote(c.m.kind, telemetry.Metadata, obj.GetResourceVersion() != rv)
	return nil
}

// Status returns the status writer, observed.
func (c observedClient) Status() client.SubResourceWriter {
	return observedStatus{SubResourceWriter: c.Client.Status(), reader: c.Client, m: c.m}
}

type observedStatus struct {
	client.SubResourceWriter
	reader client.Reader
	m      *observer
}

// Patch writes a status unless the shell is backing off from writing it, counts the write
// and whether it changed the object, and reports a fight when status writes of the same
// content for the same generation keep changing nothing (the server does not keep what
// the shell writes: a defaulting or a webhook rewrites it) or keep putting back what
// someone else changed (another controller writes the same fields), so that writing again
// cannot help.
func (s observedStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	m, now := s.m, time.Now()
	intent := statusIntent(obj)
	if wait, report, held := m.statuses.Hold(obj.GetUID(), intent, now); held {
		telemetry.BackedOff.WithLabelValues(m.kind, telemetry.Status).Inc()
		f, _ := report.(*ownership.FightingError)
		held := *f
		held.RetryAfter = wait
		return &held
	}
	// Who changed the status is in its managedFields until this write takes the fields
	// back: look, only when this write decides a fight.
	var who holders
	if m.statuses.Decisive(obj.GetUID(), intent, "status", now) {
		who = s.holders(ctx, obj)
	}
	rv := obj.GetResourceVersion()
	if err := s.SubResourceWriter.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	changed := obj.GetResourceVersion() != rv
	telemetry.Wrote(m.kind, telemetry.Status, changed)
	v := m.statuses.Wrote(obj.GetUID(), intent, "status", changed, now)
	if !v.Fighting {
		return nil
	}
	self := m.options.fieldOwner
	f := &ownership.FightingError{Kind: m.kind, Namespace: obj.GetNamespace(), Name: obj.GetName(),
		Fields: who.fields, Managers: who.managers, Admission: v.NoOp || (len(who.managers) == 0 && who.self),
		Self: self, NoOp: v.NoOp, Writes: v.Writes, RetryAfter: v.Backoff}
	if len(f.Fields) == 0 {
		f.Fields = []string{"status"}
	}
	m.statuses.Attach(obj.GetUID(), f)
	telemetry.Fights.WithLabelValues(m.kind, telemetry.Status).Inc()
	log.FromContext(ctx).Info("fight detected over the status: backing off", "fields", f.Fields, "managers", f.Managers,
		"admission", f.Admission, "writes", f.Writes, "retryAfter", f.RetryAfter)
	if r := m.options.recorder; r != nil {
		regarding := obj.DeepCopyObject().(client.Object)
		regarding.SetResourceVersion("")
		r.Eventf(regarding, nil, corev1.EventTypeWarning, "Fighting", "Reconcile", "%s", f.Error())
	}
	return nil // this write went through; the next one waits
}

// holders is what a fresh read of an object says of the status fields a write puts back.
type holders struct {
	fields   []string // "path: live → written"
	managers []string // the field managers other than the shell's that hold them
	self     bool     // the shell's own field manager holds them
}

// holders reads obj afresh (the manager's cache strips managedFields; its client does not
// cache unstructured objects) and finds which of the status fields obj is to write hold
// other values now, and who wrote those.
func (s observedStatus) holders(ctx context.Context, obj client.Object) holders {
	if s.m.gvk.Empty() {
		return holders{}
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(s.m.gvk)
	if err := s.reader.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		return holders{}
	}
	written, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return holders{}
	}
	fields := fight.Diff(live.Object["status"], written["status"], "status")
	paths, self := fight.Paths(strings.Join(fields, "\n")), s.m.options.fieldOwner
	return holders{
		fields:   fields,
		managers: fight.Managers(live.GetManagedFields(), paths, self),
		self:     slices.Contains(fight.Managers(live.GetManagedFields(), paths, ""), self),
	}
}

// statusIntent identifies what a status write sends: the generation and the status's
// content without the conditions' times, which the shell stamps anew when it puts back a
// condition someone else changed. It is computed on writes only.
func statusIntent(obj client.Object) string {
	generation := strconv.FormatInt(obj.GetGeneration(), 10)
	c := obj.DeepCopyObject().(client.Object)
	if s, ok := c.(conditions.Setter); ok {
		timeless := s.GetConditions()
		for i := range timeless {
			timeless[i].LastTransitionTime = metav1.Time{}
		}
		s.SetConditions(timeless)
	}
	f, ok := statusfield.Of(reflect.TypeOf(c))
	if !ok {
		return generation
	}
	v := reflect.ValueOf(c).Elem().FieldByIndex(f.Index)
	raw, err := json.Marshal(v.Interface())
	if err != nil {
		return generation
	}
	sum := sha256.Sum256(raw)
	return generation + "/" + hex.EncodeToString(sum[:12])
}
