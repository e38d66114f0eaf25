package ownership

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ConfigHashAnnotation is the pod template annotation SetConfigHash writes. A change of it
// is a change of the pod template, so a Deployment (StatefulSet, DaemonSet) rolls its pods.
const ConfigHashAnnotation = "reconcilekit.io/config-hash"

// ConfigHash returns a short hash of what the pods of a workload read from the given objects:
// each one's namespace and name, and its content without metadata and status (a ConfigMap's
// data and binaryData, a Secret's type and data), the same whether the object is typed or
// unstructured. Metadata
// (labels, annotations, resourceVersion) does not count, so an object that is relabelled or
// merely re-saved keeps its hash. A nil object counts as absent, for an optional reference
// to an object that does not exist: its appearance changes the hash. The order of objs counts.
func ConfigHash(objs ...client.Object) (string, error) {
	entries := make([]any, len(objs))
	for i, obj := range objs {
		if obj == nil || reflect.ValueOf(obj).IsNil() {
			continue // null: absent
		}
		data, err := configData(obj)
		if err != nil {
			return "", err
		}
		entries[i] = map[string]any{"namespace": obj.GetNamespace(), "name": obj.GetName(), "data": data}
	}
	// encoding/json sorts map keys, so equal data hashes the same.
	b, err := json.Marshal(entries)
	if err != nil {
		return "", fmt.Errorf("hashing configuration: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12]), nil
}

// SetConfigHash sets the ConfigHashAnnotation of template to ConfigHash(objs...). Build the
// desired workload with it and pass it to Ensure: the workload is updated, and rolls, when
// the referenced data changes, and not otherwise.
func SetConfigHash(template *corev1.PodTemplateSpec, objs ...client.Object) error {
	h, err := ConfigHash(objs...)
	if err != nil {
		return err
	}
	if template.Annotations == nil {
		template.Annotations = map[string]string{}
	}
	template.Annotations[ConfigHashAnnotation] = h
	return nil
}

// configData is what a pod can read of obj: everything but metadata and status. Typed and
// unstructured forms of one object give the same content, so they hash the same.
func configData(obj client.Object) (map[string]any, error) {
	var u map[string]any
	if un, ok := obj.(*unstructured.Unstructured); ok {
		u = maps.Clone(un.Object)
	} else {
		var err error
		if u, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return nil, fmt.Errorf("hashing %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
		}
	}
	// A typed object read by a typed client has no apiVersion and kind: leave them out of both.
	for _, k := range []string{"metadata", "status", "apiVersion", "kind"} {
		delete(u, k)
	}
	return u, nil
}
