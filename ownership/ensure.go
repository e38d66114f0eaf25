package ownership

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/internal/telemetry"
)

// IntentAnnotation holds a hash of the desired object Ensure last applied. When the desired
// object changes, even by losing a field, the hash changes and Ensure applies it again;
// while it is unchanged Ensure needs only the cached live object to know nothing is to do,
// also right after a restart.
const IntentAnnotation = "reconcilekit.io/intent"

// Action says what Ensure did.
type Action string

// The actions Ensure reports.
const (
	Created   Action = "Created"
	Updated   Action = "Updated"
	Unchanged Action = "Unchanged"
)

// Result is what Ensure did and, for an update, why.
type Result struct {
	// Action is what Ensure did.
	Action Action
	// Diff lists, one per line as "path: live → desired", the fields an update changed.
	// When only the desired object's shape changed (a field removed), it says so.
	Diff string
}

// Option changes how Ensure writes.
type Option func(*options)

type options struct {
	createOnly bool
}

// CreateOnly makes Ensure create the object when it is missing and otherwise leave it as it
// is: for objects whose spec cannot change once they exist, such as a Pod that must run once.
// The object gets no IntentAnnotation, which only an update would compare. The one change
// Ensure still makes is to the Writer's labels (Writer.Labels): an object that exists without
// them, made before they were given or stripped of them since, gets them with one patch of
// its labels alone, since a cache restricted by them (the reconcile shell's, OwnedByLabel)
// would otherwise never hold it. A role without patch on the kind leaves it unlabelled.
func CreateOnly() Option { return func(o *options) { o.createOnly = true } }

// Ensure makes the object desired describes exist, controlled by owner, with every field
// desired sets; it returns the live object and what it did.
//
// The rules, in order:
//   - desired gets owner as its controller (see SetController for what is refused);
//   - an object the cache does not hold is created with a plain create, which fails rather
//     than merge into an object that exists all the same (a lagging cache, or one restricted
//     by labels); the object is then read from the API server and the rules go on with it;
//   - an object controlled by anyone else, or by nothing, is returned untouched with a
//     *NotControlledError;
//   - when the live object has every field desired sets (server defaults and fields set by
//     others are ignored) and desired is the same as last applied, nothing is written;
//   - otherwise desired is applied with server-side apply, forcing ownership of its fields:
//     drift on them is reverted, fields desired no longer sets are removed, fields others
//     set are kept. A list element whose key someone changed (a container's port number)
//     is theirs under server-side apply; it is removed first, so the list ends as desired.
//     (A list the API server refuses empty, such as a Service's ports, cannot lose its only
//     element that way: that removal fails and is retried.) Elements re-keyed by a change
//     of desired itself are replaced by the apply, in one request.
//
// A StatefulSet's volume claim templates are the exception: the API server refuses to change
// them once it exists, and would refuse the whole apply, again on every reconcile. So Ensure
// never compares nor sends them for a StatefulSet that exists:
// it applies the rest (a new image rolls the pods) and, when desired has other claim
// templates than the live ones (by the fields desired sets, so server defaults do not
// count; a claim added or removed does), returns the live object with an *ImmutableError
// that lists the differences (IsImmutable). While desired stays the same, the next calls
// send nothing and return the same error. A rest that the API server refuses without the
// new templates (a mount of a claim only they have) is refused as a whole: the error then
// joins the refusal.
//
// The live object is read through c, normally the manager's cached client: in steady state
// Ensure makes no request at all, and creating an object takes one. desired itself is not
// modified.
//
// A request the API server refuses as forbidden returns a *ForbiddenError, whose marker
// grants every verb Ensure needs on the kind (get, list, watch, create and, unless
// CreateOnly, patch) that the role lacks.
func Ensure[T client.Object](ctx context.Context, w Writer, owner client.Object, desired T, opts ...Option) (T, Result, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	live, result, err := ensure(ctx, w, owner, desired, o)
	verbs := ensureVerbs
	if o.createOnly {
		verbs = createOnlyVerbs
	}
	return live, result, w.explainForbidden(ctx, err, owner, desired, verbs)
}

// ensure is Ensure, whose refusals the caller explains.
func ensure[T client.Object](ctx context.Context, w Writer, owner client.Object, desired T, o options) (T, Result, error) {
	var zero T
	gvk, err := w.check(desired)
	if err != nil {
		return zero, Result{}, err
	}
	c := w.Client
	want := desired.DeepCopyObject().(T)
	if err := SetController(owner, want, c.Scheme()); err != nil {
		return zero, Result{}, err
	}
	key := client.ObjectKeyFromObject(want)
	live := newLike(want)
	getErr := c.Get(ctx, key, live)
	if getErr == nil {
		keepOwnerVersion(c.RESTMapper(), want, live) // before the hash: the same owner is the same intent
	}
	var in intentHash
	if !o.createOnly { // never compared again: no intent to keep, in the object or in every cache of it
		if in, err = intentOf(want, live.GetAnnotations()[IntentAnnotation]); err != nil {
			return zero, Result{}, err
		}
	}
	plain := want.DeepCopyObject().(T) // unlabelled, for an intent found again below
	w.addLabels(want)                  // after the hash: moving the owner is no change of intent

	err = getErr
	if apierrors.IsNotFound(err) {
		created := want.DeepCopyObject().(T)
		if in.current != "" {
			setIntent(created, in.current)
		}
		err = c.Create(ctx, created, client.FieldOwner(w.FieldOwner))
		if err == nil {
			telemetry.Wrote(gvk.Kind, telemetry.Create, true)
			return created, Result{Action: Created}, nil
		}
		if apierrors.IsAlreadyExists(err) {
			// The manager's client does not cache unstructured objects: this read is fresh.
			if err = readLive(ctx, c, gvk, key, live); err == nil {
				// An object the cache does not hold (restricted by labels it lacks, a
				// child made before OwnedByLabel): its owner's version and intent count as
				// for one the cache held, so that only what differs is written.
				keepOwnerVersion(c.RESTMapper(), plain, live)
				if !o.createOnly {
					in, err = intentOf(plain, live.GetAnnotations()[IntentAnnotation])
				}
				want = plain
				w.addLabels(want)
			}
		}
	}
	if err != nil {
		return zero, Result{}, err
	}
	if !IsControlledBy(live, owner) {
		return live, Result{}, &NotControlledError{
			Kind: gvk.Kind, Namespace: live.GetNamespace(), Name: live.GetName(),
			Controller: controllerOf(live),
		}
	}
	if o.createOnly {
		return labelCreated(ctx, w, gvk.Kind, live)
	}
	// After the intent: a desired object that keeps asking for other claim templates is the
	// same intent, which sends nothing once the rest is applied.
	immutable := keepImmutable(want, live)
	diffs := drift(want, live)
	reshaped := !in.recorded(live)
	if len(diffs) == 0 && !reshaped {
		return live, Result{Action: Unchanged}, immutable
	}
	if reshaped {
		// Fields desired no longer sets may have to go. Server-side apply removes only the
		// fields its manager owns by applying, and the create left them owned by an update:
		// hand them over first. The cache strips managedFields, so read them fresh.
		if err := readLive(ctx, c, gvk, key, live); err != nil {
			return zero, Result{}, err
		}
		if err := takeOverCreatedFields(ctx, c, live, gvk.Kind, w.FieldOwner); err != nil {
			return zero, Result{}, err
		}
	}
	if len(diffs) == 0 {
		diffs = []string{"the desired object changed shape (a field was added or removed)"}
	}
	// A changed desired object re-keys its own elements (a new port): they are this
	// manager's, and the apply replaces them in one request, where removing them first
	// could leave a list the API server refuses empty (a Service's ports). Only an element
	// someone else re-keyed, found while desired is unchanged, is removed first.
	if strays := strays(want, live); len(strays) > 0 && !reshaped {
		if err := removeStrays(ctx, c, live, gvk.Kind, strays); err != nil {
			return zero, Result{}, err
		}
	}
	updated, result, err := watchedApply(ctx, w, owner, want, live, gvk, in.current, reshaped, diffs)
	if immutable != nil {
		// The rest may need the new claim templates (a mount of a new claim): say why.
		return updated, result, errors.Join(immutable, err)
	}
	return updated, result, err
}

// labelCreated gives live, an object controlled by the Writer's owner that Ensure does not
// otherwise change (CreateOnly), the Writer's labels it lacks, with a merge patch of those
// labels alone guarded by its resourceVersion: a child made before the labels were given,
// or whose labels someone removed, which a cache restricted by them does not hold. A
// refusal (forbidden: CreateOnly needs no patch otherwise) leaves it as it is.
func labelCreated[T client.Object](ctx context.Context, w Writer, kind string, live T) (T, Result, error) {
	missing := map[string]any{}
	for k, v := range w.Labels {
		if got, ok := live.GetLabels()[k]; !ok || got != v {
			missing[k] = v
		}
	}
	if len(missing) == 0 {
		return live, Result{Action: Unchanged}, nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": missing, "resourceVersion": live.GetResourceVersion()}})
	if err != nil {
		return live, Result{}, err
	}
	patched := live.DeepCopyObject().(T)
	switch err := w.Client.Patch(ctx, patched, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(w.FieldOwner)); {
	case apierrors.IsForbidden(err):
		return live, Result{Action: Unchanged}, nil
	case err != nil:
		return live, Result{}, err
	}
	telemetry.Wrote(kind, telemetry.Update, true)
	return patched, Result{Action: Updated, Diff: labelDiff(missing)}, nil
}

// labelDiff says which labels labelCreated gave, one per line as a Diff does.
func labelDiff(labels map[string]any) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b []byte
	for _, k := range keys {
		b = fmt.Appendf(b, "metadata.labels.%s: <none> → %v\n", k, labels[k])
	}
	return strings.TrimSuffix(string(b), "\n")
}

// keepOwnerVersion gives want's controller reference the apiVersion of live's when both
// name the same owner (by UID, group and kind) in another version that the API server
// still serves. An owner's kind that gains a version (a new hub the controller reads) thus
// rewrites none of the objects it owns: the garbage collector and the owner's watches
// find the owner by any version it is served in. A version no longer served is replaced,
// for the garbage collector would not find the owner through it.
func keepOwnerVersion(mapper meta.RESTMapper, want, live client.Object) {
	old := metav1.GetControllerOfNoCopy(live)
	refs := want.GetOwnerReferences()
	i := slices.IndexFunc(refs, func(r metav1.OwnerReference) bool { return r.Controller != nil && *r.Controller })
	if old == nil || i < 0 || mapper == nil || old.UID != refs[i].UID || old.Kind != refs[i].Kind || old.APIVersion == refs[i].APIVersion {
		return
	}
	oldGV, err := schema.ParseGroupVersion(old.APIVersion)
	if err != nil {
		return
	}
	if newGV, err := schema.ParseGroupVersion(refs[i].APIVersion); err != nil || newGV.Group != oldGV.Group {
		return
	}
	if _, err := mapper.RESTMapping(schema.GroupKind{Group: oldGV.Group, Kind: old.Kind}, oldGV.Version); err != nil {
		return
	}
	refs = slices.Clone(refs)
	refs[i].APIVersion = old.APIVersion
	want.SetOwnerReferences(refs)
}

// readLive reads the object from the API server into live.
func readLive(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, key client.ObjectKey, live client.Object) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, key, u); err != nil {
		return err
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, live)
}

// takeOverCreatedFields moves the fields manager owns by an update (the create) into its
// apply entry, with a patch guarded by live's resourceVersion; live becomes the result.
// The patch is a write of a child of kind like any other, and counted as one.
func takeOverCreatedFields(ctx context.Context, c client.Client, live client.Object, kind, manager string) error {
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(live, sets.New(manager), manager)
	if err != nil || patch == nil {
		return err
	}
	rv := live.GetResourceVersion()
	if err := c.Patch(ctx, live, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(manager)); err != nil {
		return err
	}
	telemetry.Wrote(kind, telemetry.Update, live.GetResourceVersion() != rv)
	return nil
}

// newLike returns a new, empty object of obj's type.
func newLike[T client.Object](obj T) T {
	return reflect.New(reflect.TypeOf(obj).Elem()).Interface().(T)
}

// apply sends want as a server-side apply configuration, with uid as a precondition, and
// returns the object the server answered with.
func apply[T client.Object](ctx context.Context, w Writer, want T, gvk schema.GroupVersionKind, intent string, uid types.UID) (T, error) {
	var zero T
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err != nil {
		return zero, err
	}
	obj := &unstructured.Unstructured{Object: applyConfiguration(u)}
	obj.SetGroupVersionKind(gvk)
	obj.SetUID(uid) // a precondition: a recreated object is not overwritten
	setIntent(obj, intent)

	if err := w.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(w.FieldOwner), client.ForceOwnership); err != nil {
		return zero, err
	}
	live := newLike(want)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, live); err != nil {
		return zero, err
	}
	return live, nil
}

// removeStrays removes the strays from live with a JSON patch guarded by its
// resourceVersion, counted as a write of a child of kind. Removing, unlike applying, needs
// no ownership of the elements.
func removeStrays(ctx context.Context, c client.Client, live client.Object, kind string, strays []stray) error {
	ops := []map[string]any{{"op": "test", "path": "/metadata/resourceVersion", "value": live.GetResourceVersion()}}
	for _, s := range strays {
		ops = append(ops, map[string]any{"op": "remove", "path": s.path})
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	patched := live.DeepCopyObject().(client.Object)
	if err := c.Patch(ctx, patched, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		return err
	}
	telemetry.Wrote(kind, telemetry.Update, patched.GetResourceVersion() != live.GetResourceVersion())
	return nil
}

// applyConfiguration keeps what a caller can mean to set: no status, no server-managed
// metadata, no nulls (an apply configuration's null asks the server to drop the field).
func applyConfiguration(u map[string]any) map[string]any {
	delete(u, "status")
	if meta, ok := u["metadata"].(map[string]any); ok {
		for _, k := range []string{"creationTimestamp", "resourceVersion", "uid", "generation", "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"} {
			delete(meta, k)
		}
	}
	dropNulls(u)
	return u
}

func dropNulls(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil {
				delete(v, k)
				continue
			}
			dropNulls(e)
		}
	case []any:
		for _, e := range v {
			dropNulls(e)
		}
	}
}
