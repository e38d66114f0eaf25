package ownership

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/reconcilekit/reconcilekit/internal/fight"
	"github.com/reconcilekit/reconcilekit/internal/gotype"
	"github.com/reconcilekit/reconcilekit/internal/writerpolicy"
)

// OwnedByLabel is the label the reconcile shell's Writer (reconcile.Scope) gives every child
// it creates or applies, its value naming the kind of the child's owner (such as
// memcached.cache.example.com): a manager made by reconcile.Manager caches the children of a
// declaration by it, so that its cache holds the operator's own children rather than every
// object of their kinds in the cluster. A child without it, made before it was given or
// stripped of it since, is found by a live read and given it again (Ensure, and the
// manager's adoption as it starts); an object of a child's name controlled by someone else
// never is. Like IntentAnnotation it is not part of the desired object's intent.
const OwnedByLabel = "reconcilekit.io/owned-by"

// Writer is what Ensure, EnsureSet and Delete write an owner's children with: the client,
// the name the writes carry, where drift and fights are recorded, the labels every child
// gets and the kinds that may be written. The reconcile shell hands its logic one for each
// reconcile, filled in from the controller's declaration (reconcile.Scope); outside the
// shell, fill one in.
type Writer struct {
	// Client reads the live children, normally from the manager's cache, and writes them.
	Client client.Client

	// FieldOwner is the server-side apply field manager of every write, so that a conflict
	// message names the operator and two controllers that manage different fields of one
	// object do not undo each other's work. Required: a write without one is refused.
	FieldOwner string

	// Recorder, if set, receives a Normal DriftReverted event on the owner whenever Ensure
	// reverts drift, and a Warning Fighting event when it detects a fight.
	Recorder events.EventRecorder

	// Labels are given to every object Ensure creates or applies, without counting in
	// IntentAnnotation: labels that say where the owner belongs rather than what the child
	// is, such as the shard label of package sharding, so that a child is in the same
	// shard's cache as its owner from its creation on.
	Labels map[string]string

	// Owns lists the kinds that may be written: a child of any other kind is refused before
	// anything is sent, with an error naming the reconcile.WithChildren line to add.
	//
	// A Writer filled in by hand with an empty Owns writes any kind: outside a declaration
	// there are no watches for a kind list to keep honest, and a hand-filled Writer's
	// caller chose its kinds itself. The Writer the reconcile shell gives the logic
	// (reconcile.Scope) is bound to its declaration: it writes exactly the kinds the
	// declaration owns (reconcile.WithChildren), whatever Owns says, and none when the
	// declaration owns none, so that a child the manager does not watch is never written
	// silently. The binding is a value the Writer holds, not a property of its Client, so
	// a copy of the Writer whose Client the logic wraps (a log, metrics, a dry run) keeps
	// it, and so does its fight detector; a Writer filled in by hand has none.
	Owns []schema.GroupVersionKind

	// policy is the declaration the reconcile shell binds the Writer to (internal/writerpolicy).
	policy *writerpolicy.Policy
}

func init() {
	writerpolicy.Register(func(w Writer, p *writerpolicy.Policy) Writer {
		w.policy = p
		return w
	})
}

// Declared may be implemented by the Client of a Writer filled in by hand: the kinds that
// Writer writes, exactly, even when there are none, whatever Owns says.
//
// Deprecated: the reconcile shell no longer puts such a client in its Writer: it binds
// the Writer to its declaration explicitly, which survives a wrapped Client. A Writer
// bound so ignores Declared; fill in Owns instead.
type Declared interface {
	DeclaredChildren() []schema.GroupVersionKind
}

// check refuses a write that cannot be right before anything is sent: a Writer without a
// field owner, or a child of a kind it does not own. It returns the child's kind.
func (w Writer) check(obj client.Object) (schema.GroupVersionKind, error) {
	if w.Client == nil {
		return schema.GroupVersionKind{}, fmt.Errorf("ownership: the Writer has no Client")
	}
	gvk, err := apiutil.GVKForObject(obj, w.Client.Scheme())
	if err != nil {
		return gvk, err
	}
	if w.FieldOwner == "" {
		return gvk, fmt.Errorf("ownership: writing %s %s without a field owner: set Writer.FieldOwner, or write with the Writer the reconcile shell gives the logic (reconcile.Scope)", gvk.Kind, obj.GetName())
	}
	owns := w.Owns
	if p := w.policy; p != nil && p.Declared {
		owns = p.Owns
	} else if d, ok := w.Client.(Declared); ok {
		owns = d.DeclaredChildren()
	} else if len(owns) == 0 {
		return gvk, nil
	}
	for _, owned := range owns {
		if owned.Group == gvk.Group && owned.Kind == gvk.Kind {
			return gvk, nil
		}
	}
	err = refusal(gvk, obj, owns)
	if p := w.policy; p != nil && p.Refused != nil {
		p.Refused(err)
	}
	return gvk, err
}

// UndeclaredError is the refusal of a write of a child whose kind the Writer does not own:
// a wiring mistake no retry can fix, which names the reconcile.WithChildren line to write.
type UndeclaredError struct {
	// Kind is the child's kind.
	Kind schema.GroupVersionKind
	// Owns are the kinds the Writer owns.
	Owns []schema.GroupVersionKind

	message string
}

// Error says which kind was written, and how to declare it.
func (e *UndeclaredError) Error() string { return e.message }

// IsUndeclared reports whether err is, or wraps, an UndeclaredError.
func IsUndeclared(err error) bool {
	var u *UndeclaredError
	return errors.As(err, &u)
}

// refusal is the error of a write of obj, of kind gvk, by a Writer that owns only owns: it
// names the reconcile.WithChildren line that declares them all.
func refusal(gvk schema.GroupVersionKind, obj client.Object, owns []schema.GroupVersionKind) error {
	var names, literals []string
	for _, owned := range owns {
		names = append(names, owned.Kind)
		literals = append(literals, "&"+gotype.OfKind(owned)+"{}")
	}
	literals = append(literals, "&"+gotype.OfKind(gvk)+"{}")
	it := "none"
	if len(names) > 0 {
		it = strings.Join(names, ", ")
	}
	return &UndeclaredError{Kind: gvk, Owns: owns, message: fmt.Sprintf("ownership: %s %s is of a kind the controller does not own (it owns %s): declare it, so that its changes are watched and it is cached: reconcile.WithChildren(%s)",
		gvk.Kind, obj.GetName(), it, strings.Join(literals, ", "))}
}

// fights returns the fight detector w is bound to, or nil.
func (w Writer) fights() *fight.Detector {
	if w.policy == nil {
		return nil
	}
	return w.policy.Fights
}

// addLabels adds w's labels to obj.
func (w Writer) addLabels(obj client.Object) {
	if len(w.Labels) == 0 {
		return
	}
	all := obj.GetLabels()
	if all == nil {
		all = make(map[string]string, len(w.Labels))
	}
	for k, v := range w.Labels {
		all[k] = v
	}
	obj.SetLabels(all)
}

// recordDrift records on owner that the object it owns was reverted, when w has a recorder.
func (w Writer) recordDrift(owner, obj client.Object, kind, diff string) {
	if w.Recorder == nil {
		return
	}
	// Without its resourceVersion, so that repeated reverts fold into one series; the
	// fields are in the action, so that a revert of other fields is an event of its own.
	regarding := owner.DeepCopyObject().(client.Object)
	regarding.SetResourceVersion("")
	w.Recorder.Eventf(regarding, nil, corev1.EventTypeNormal, "DriftReverted", revertAction(diff), "reverted %s %s: %s", kind, obj.GetName(), diff)
}

// revertAction names the fields of a diff ("path: live → desired" a line) as an event's
// action, which the API limits to 128 characters.
func revertAction(diff string) string {
	var paths []string
	for line := range strings.Lines(diff) {
		path, _, _ := strings.Cut(line, ": ")
		paths = append(paths, strings.TrimSpace(path))
	}
	action := "Revert " + strings.Join(paths, ",")
	if len(action) > 128 {
		action = action[:128]
	}
	return action
}
