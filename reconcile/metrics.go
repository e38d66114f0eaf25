package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unique"
	"weak"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/internal/fight"
	"github.com/reconcilekit/reconcilekit/internal/telemetry"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// observer keeps the shell's metrics of one kind: the conditions last seen on each object,
// which reconcilekit_condition reports, and the detector of status writes that change
// nothing.
type observer struct {
	kind     string
	gvk      schema.GroupVersionKind // unknown without a scheme: fights then name no fields
	mu       sync.Mutex
	seen     map[types.NamespacedName][]condition // replaced, never changed in place
	statuses fight.Detector
	options  *options
}

// condition is a condition's type and status, interned: the same few strings for every
// object.
type condition struct{ typ, status unique.Handle[string] }

func newObserver(c client.Client, obj client.Object, o *options) *observer {
	m := &observer{kind: reflect.TypeOf(obj).Elem().Name(), seen: map[types.NamespacedName][]condition{}, options: o}
	if c != nil && c.Scheme() != nil {
		if gvk, err := apiutil.GVKForObject(obj, c.Scheme()); err == nil {
			m.kind, m.gvk = gvk.Kind, gvk
		}
	}
	return m
}

// observe counts the reconcile of obj by its outcome and keeps obj's conditions for its
// series; an object that is gone, or leaving, loses them. It returns the outcome, with a
// fight's error given its back-off as a delay, so that the next write waits for it instead
// of feeding the fight.
func (m *observer) observe(key types.NamespacedName, obj client.Object, outcome requeue.Outcome) requeue.Outcome {
	if wait, ok := ownership.FightBackoff(outcome.Err()); ok && !outcome.IsTerminal() {
		outcome = requeue.RetryAfter(outcome.Err(), wait)
	}
	telemetry.Reconciles.WithLabelValues(m.kind, outcomeLabel(outcome)).Inc()
	if obj == nil || !obj.GetDeletionTimestamp().IsZero() {
		m.forget(key)
		return outcome
	}
	var now []condition
	if s, ok := obj.(conditions.Getter); ok {
		for _, c := range s.GetConditions() {
			now = append(now, condition{unique.Make(c.Type), unique.Make(string(c.Status))})
		}
	}
	m.mu.Lock()
	m.seen[key] = now
	m.mu.Unlock()
	return outcome
}

// forget drops the conditions of the object key, which is gone or leaving.
func (m *observer) forget(key types.NamespacedName) { conditionSeries.forget(m.kind, key) }

// conditionSeries serves reconcilekit_condition when scraped, from the conditions each
// live observer last saw. A GaugeVec would keep a metric with label pairs of its own for
// every condition of every object, about 2 KiB an object of five conditions for as long as
// the object exists; the observer keeps the conditions anyway, and a scrape builds the
// series only while it reads them.
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

// each calls f, holding c's lock, for every observer alive, oldest first, and forgets the
// others. f may take an observer's lock: nothing holds one while it takes c's.
func (c *conditionCollector) each(f func(*observer)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.observers[:0]
	for _, w := range c.observers {
		if m := w.Value(); m != nil {
			f(m)
			kept = append(kept, w)
		}
	}
	clear(c.observers[len(kept):])
	c.observers = kept
}

// forget removes the conditions of the object key of kind from every observer: it is gone
// or leaving, and a shell that reconciled it before this one (a manager started again in
// the same process) may still hold them.
func (c *conditionCollector) forget(kind string, key types.NamespacedName) {
	c.each(func(m *observer) {
		if m.kind == kind {
			m.mu.Lock()
			delete(m.seen, key)
			m.mu.Unlock()
		}
	})
}

// Describe sends the one description of reconcilekit_condition.
func (c *conditionCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect sends a series for each condition of each object an observer holds. An object
// that two shells of one kind hold is reported as the newest saw it.
func (c *conditionCollector) Collect(ch chan<- prometheus.Metric) {
	var observers []*observer
	shells := map[string]int{}
	c.each(func(m *observer) {
		observers = append(observers, m)
		shells[m.kind]++
	})
	slices.Reverse(observers) // newest first
	// The objects reported of each kind that more than one shell reconciles.
	reported := map[string]sets.Set[types.NamespacedName]{}
	pairs := labelPairs{}
	for _, m := range observers {
		m.mu.Lock()
		seen := maps.Clone(m.seen)
		m.mu.Unlock()
		done, shared := reported[m.kind]
		if !shared && shells[m.kind] > 1 {
			done = sets.New[types.NamespacedName]()
			reported[m.kind] = done
		}
		for key, conds := range seen {
			if done != nil {
				if done.Has(key) {
					continue
				}
				done.Insert(key)
			}
			name := &dto.LabelPair{Name: &labelName, Value: &key.Name}
			for _, cond := range conds {
				ch <- &conditionMetric{desc: c.desc, labels: [...]*dto.LabelPair{ // sorted by name
					pairs.of(&labelKind, m.kind), name, pairs.of(&labelNamespace, key.Namespace),
					pairs.of(&labelStatus, cond.status.Value()), pairs.of(&labelType, cond.typ.Value()),
				}}
			}
		}
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
	v := reflect.ValueOf(c).Elem().FieldByName("Status")
	if !v.IsValid() {
		return generation
	}
	raw, err := json.Marshal(v.Interface())
	if err != nil {
		return generation
	}
	sum := sha256.Sum256(raw)
	return generation + "/" + hex.EncodeToString(sum[:12])
}
