package webhook

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// KeptAnnotation holds, on an object converted to a spoke, the hub it was converted
// from (without its metadata), so that what the spoke has no room for survives a round
// trip (Keep, Restore).
const KeptAnnotation = "reconcilekit.io/conversion-data"

// Keep records hub, as it is, in an annotation of spoke, its conversion: call it last in
// the conversion from the hub to a spoke. spoke's annotations are copied, never shared
// with hub's.
func Keep(hub, spoke client.Object) error {
	raw, err := json.Marshal(hub)
	if err != nil {
		return fmt.Errorf("webhook: keeping %T in its spoke: %w", hub, err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fmt.Errorf("webhook: keeping %T in its spoke: %w", hub, err)
	}
	delete(fields, "metadata")
	delete(fields, "apiVersion")
	delete(fields, "kind")
	if raw, err = json.Marshal(fields); err != nil {
		return fmt.Errorf("webhook: keeping %T in its spoke: %w", hub, err)
	}
	annotations := maps.Clone(spoke.GetAnnotations())
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[KeptAnnotation] = string(raw)
	spoke.SetAnnotations(annotations)
	return nil
}

// Restore gives restore the hub that Keep recorded in spoke, if it did, for restore to
// copy into hub, spoke's conversion, the fields spoke has no room for; and removes the
// record from hub's annotations (copied, never shared with spoke's). Call it last in the
// conversion from a spoke to the hub. A spoke written without the record (created in its
// own version) leaves those fields as the conversion set them.
func Restore[H client.Object](spoke client.Object, hub H, restore func(kept H)) error {
	if annotations := hub.GetAnnotations(); annotations != nil {
		if _, ok := annotations[KeptAnnotation]; ok {
			annotations = maps.Clone(annotations)
			delete(annotations, KeptAnnotation)
			if len(annotations) == 0 {
				annotations = nil
			}
			hub.SetAnnotations(annotations)
		}
	}
	raw, ok := spoke.GetAnnotations()[KeptAnnotation]
	if !ok {
		return nil
	}
	kept := reflect.New(reflect.TypeOf(hub).Elem()).Interface().(H)
	if err := json.Unmarshal([]byte(raw), kept); err != nil {
		return fmt.Errorf("webhook: restoring %T from annotation %s: %w", hub, KeptAnnotation, err)
	}
	restore(kept)
	return nil
}
