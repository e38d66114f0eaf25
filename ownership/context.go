package ownership

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

type fieldOwnerKey struct{}

type recorderKey struct{}

type childLabelsKey struct{}

// WithFieldOwner returns a copy of ctx in which Ensure applies as field manager name unless
// a FieldOwner option says otherwise. The reconcile shell sets it from its own field owner,
// so that an operator's writes carry one name.
func WithFieldOwner(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, fieldOwnerKey{}, name)
}

// WithRecorder returns a copy of ctx in which Ensure records a Normal DriftReverted event on
// the owner, naming the fields, whenever it reverts drift. The reconcile shell sets it from
// its recorder.
func WithRecorder(ctx context.Context, r events.EventRecorder) context.Context {
	return context.WithValue(ctx, recorderKey{}, r)
}

// WithChildLabels returns a copy of ctx in which Ensure gives every object it creates or
// applies these labels too, without counting them in IntentAnnotation: labels that say
// where the owner belongs rather than what the child is, such as the shard label sharding
// sets, so that a child is in the same shard's cache as its owner from its creation on.
func WithChildLabels(ctx context.Context, labels map[string]string) context.Context {
	return context.WithValue(ctx, childLabelsKey{}, labels)
}

// addChildLabels adds the labels ctx carries for children to obj.
func addChildLabels(ctx context.Context, obj client.Object) {
	labels, _ := ctx.Value(childLabelsKey{}).(map[string]string)
	if len(labels) == 0 {
		return
	}
	all := obj.GetLabels()
	if all == nil {
		all = make(map[string]string, len(labels))
	}
	for k, v := range labels {
		all[k] = v
	}
	obj.SetLabels(all)
}

// fieldOwnerFrom returns the field manager ctx carries, or DefaultFieldOwner.
func fieldOwnerFrom(ctx context.Context) string {
	if name, ok := ctx.Value(fieldOwnerKey{}).(string); ok && name != "" {
		return name
	}
	return DefaultFieldOwner
}

// recordDrift records on owner that the object it owns was reverted, when ctx carries a
// recorder.
func recordDrift(ctx context.Context, owner, obj client.Object, kind, diff string) {
	if r, ok := ctx.Value(recorderKey{}).(events.EventRecorder); ok {
		// Without its resourceVersion, so that repeated reverts fold into one series; the
		// fields are in the action, so that a revert of other fields is an event of its own.
		regarding := owner.DeepCopyObject().(client.Object)
		regarding.SetResourceVersion("")
		r.Eventf(regarding, nil, corev1.EventTypeNormal, "DriftReverted", revertAction(diff), "reverted %s %s: %s", kind, obj.GetName(), diff)
	}
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
