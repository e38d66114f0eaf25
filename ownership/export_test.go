package ownership

import (
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/internal/fight"
	"github.com/reconcilekit/reconcilekit/internal/writerpolicy"
)

// TestFieldOwner is the field manager of the tests' writes.
const TestFieldOwner = "reconcilekit-test"

// testFights is the detector of every NewTestWriter: each test's objects have UIDs of their own.
var testFights fight.Detector

// NewTestWriter returns a Writer of c as the tests' field manager, detecting fights as the
// shell's does.
func NewTestWriter(c client.Client) Writer {
	return Writer{Client: c, FieldOwner: TestFieldOwner, policy: &writerpolicy.Policy{Fights: &testFights}}
}

// EarlierIntent is the intent of desired, controlled by owner, in the JSON form earlier
// releases recorded.
func EarlierIntent(owner, desired client.Object) (string, error) {
	want := desired.DeepCopyObject().(client.Object)
	if err := SetController(owner, want, scheme.Scheme); err != nil {
		return "", err
	}
	return jsonHash(want)
}
