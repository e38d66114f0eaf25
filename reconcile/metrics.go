package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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
// so that a condition that went away takes its series with it, and the detector of status
// writes that change nothing.
type observer struct {
	kind     string
	gvk      schema.GroupVersionKind // unknown without a scheme: fights then name no fields
	mu       sync.Mutex
	seen     map[types.NamespacedName][]condition
	statuses fight.Detector
	options  *options
}

type condition struct{ typ, status string }

func newObserver(c client.Client, obj client.Object, o *options) *observer {
	m := &observer{kind: reflect.TypeOf(obj).Elem().Name(), seen: map[types.NamespacedName][]condition{}, options: o}
	if c != nil && c.Scheme() != nil {
		if gvk, err := apiutil.GVKForObject(obj, c.Scheme()); err == nil {
			m.kind, m.gvk = gvk.Kind, gvk
		}
	}
	return m
}

// observe counts the reconcile of obj by its outcome and keeps obj's condition series;
// an object that is gone, or leaving, loses its series. It returns the outcome, with a
// fight's error given its back-off as a delay, so that the next write waits for it instead
// of feeding the fight.
func (m *observer) observe(key types.NamespacedName, obj client.Object, outcome requeue.Outcome) requeue.Outcome {
	if wait, ok := ownership.FightBackoff(outcome.Err()); ok && !outcome.IsTerminal() {
		outcome = requeue.RetryAfter(outcome.Err(), wait)
	}
	telemetry.Reconciles.WithLabelValues(m.kind, outcomeLabel(outcome)).Inc()
	var now []condition
	if obj == nil || !obj.GetDeletionTimestamp().IsZero() {
		m.forget(key)
		return outcome
	}
	if s, ok := obj.(conditions.Getter); ok {
		for _, c := range s.GetConditions() {
			now = append(now, condition{c.Type, string(c.Status)})
		}
	}
	m.mu.Lock()
	before := m.seen[key]
	m.seen[key] = now
	m.mu.Unlock()
	for _, c := range before {
		if !contains(now, c) {
			telemetry.Conditions.DeleteLabelValues(m.kind, key.Namespace, key.Name, c.typ, c.status)
		}
	}
	for _, c := range now {
		telemetry.Conditions.WithLabelValues(m.kind, key.Namespace, key.Name, c.typ, c.status).Set(1)
	}
	return outcome
}

// forget removes the series of the object key, which is gone or leaving.
func (m *observer) forget(key types.NamespacedName) {
	m.mu.Lock()
	before, ok := m.seen[key]
	delete(m.seen, key)
	m.mu.Unlock()
	if !ok {
		// Not seen by this process (it restarted): the series, if any, are a previous
		// process's. Partial match costs a walk of the series, only here.
		telemetry.Conditions.DeletePartialMatch(map[string]string{"kind": m.kind, "namespace": key.Namespace, "name": key.Name})
		return
	}
	for _, c := range before {
		telemetry.Conditions.DeleteLabelValues(m.kind, key.Namespace, key.Name, c.typ, c.status)
	}
}

func contains(cs []condition, c condition) bool {
	for _, e := range cs {
		if e == c {
			return true
		}
	}
	return false
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
