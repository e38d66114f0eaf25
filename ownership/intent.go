package ownership

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// protoPrefix marks an intent hashed from the protobuf form of the desired object.
const protoPrefix = "p"

// intentHash is the desired object's content as Ensure records it in IntentAnnotation.
type intentHash struct {
	current  string // what Ensure writes
	previous string // the same content in the form of earlier releases, when the live object still carries that form
}

// recorded reports whether live carries this intent, in either form.
func (in intentHash) recorded(live client.Object) bool {
	got := live.GetAnnotations()[IntentAnnotation]
	return got == in.current || (in.previous != "" && got == in.previous)
}

// intentOf identifies desired's content: a change the API server would see changes it, a
// change it would not (an unexported field) does not. Kubernetes' own kinds are hashed in
// their protobuf form, which their generated code writes without reflection and with map
// keys in order, several times faster than JSON; this runs on every reconcile, for every
// child. Other kinds are hashed in their JSON form, as every kind was before: when live
// (the recorded intent) is in that form, the JSON hash is computed too, so that an upgrade
// of the library rewrites no child whose content has not changed.
func intentOf(desired client.Object, live string) (intentHash, error) {
	m, ok := desired.(interface{ Marshal() ([]byte, error) })
	if !ok {
		h, err := jsonHash(desired)
		return intentHash{current: h}, err
	}
	b, err := m.Marshal()
	if err != nil {
		return intentHash{}, fmt.Errorf("hashing the desired %T: %w", desired, err)
	}
	in := intentHash{current: protoPrefix + sum(b)}
	if live != "" && !strings.HasPrefix(live, protoPrefix) {
		in.previous, err = jsonHash(desired)
	}
	return in, err
}

// jsonHash hashes obj's JSON form.
func jsonHash(obj client.Object) (string, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("hashing the desired %T: %w", obj, err)
	}
	return sum(append(b, '\n')), nil // the newline json.Encoder wrote: the same hash as before
}

// sum is a short hex digest of b.
func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:12])
}

// setIntent records intent in obj's IntentAnnotation.
func setIntent(obj client.Object, intent string) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[IntentAnnotation] = intent
	obj.SetAnnotations(annotations)
}
