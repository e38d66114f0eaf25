package v1alpha1_test

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// scheduleRefused stands for what the API server says of a schedule that its rule refuses:
// the schedule and the rule's message.
const scheduleRefused = "schedule refused"

// TestCRD checks the generated CustomResourceDefinition against a real API server: a
// schedule that is not an RFC 3339 time in UTC is refused with a message that says what
// is wanted, not with a regular expression.
func TestCRD(t *testing.T) {
	cp := reconciletest.StartAPIServer(t, "../../config/crd/bases")
	scheme := runtime.NewScheme()
	if err := cnatv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := cp.Client(t, scheme)

	for i, tc := range []struct {
		schedule string
		command  string
		refused  string // what the API server's error says, if it refuses the At
	}{
		{schedule: "2030-01-02T15:04:05Z"},
		{schedule: "2030-01-02T15:04:05.123456789Z"},
		{schedule: "2030-01-02T17:04:05+02:00", refused: scheduleRefused},
		{schedule: "2030-01-02T15:04:05+00:00", refused: scheduleRefused},
		{schedule: "2030-01-02T15:04:05z", refused: scheduleRefused},
		{schedule: "2030-01-02 15:04:05Z", refused: scheduleRefused},
		{schedule: "2030-01-02T15:04Z", refused: scheduleRefused},
		{schedule: "2030-13-02T15:04:05Z", refused: scheduleRefused},
		{schedule: "2030-02-30T15:04:05Z", refused: scheduleRefused},
		{schedule: "2030-01-02T25:04:05Z", refused: scheduleRefused},
		{schedule: "tomorrow", refused: scheduleRefused},
		{schedule: "", refused: scheduleRefused},
		{schedule: "2030-01-02T15:04:05." + strings.Repeat("0", 60) + "Z",
			refused: "spec.schedule: Too long: may not be more than 64 bytes"},
		{schedule: "2030-01-02T15:04:05Z", command: "-",
			refused: "spec.command: Invalid value: \"\": spec.command in body should be at least 1 chars long"},
	} {
		t.Run(fmt.Sprintf("%q", tc.schedule), func(t *testing.T) {
			command := tc.command
			switch command {
			case "":
				command = "echo hello"
			case "-":
				command = ""
			}
			at := &cnatv1alpha1.At{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("at-%d", i), Namespace: "default"},
				Spec:       cnatv1alpha1.AtSpec{Schedule: tc.schedule, Command: command},
			}
			err := c.Create(t.Context(), at)
			if tc.refused == scheduleRefused {
				tc.refused = fmt.Sprintf("spec.schedule: Invalid value: %q: schedule must be an RFC 3339 time in UTC ending in Z, such as 2026-01-02T15:04:05Z", tc.schedule)
			}
			switch {
			case tc.refused == "" && err != nil:
				t.Fatalf("creating: %v", err)
			case tc.refused != "" && err == nil:
				t.Fatalf("created, want it refused with %q", tc.refused)
			case tc.refused != "" && !strings.Contains(err.Error(), tc.refused):
				t.Errorf("refused with\n\t%v\nwant it to say %q", err, tc.refused)
			case err != nil:
				t.Logf("refused: %v", err)
			}
		})
	}
	// No operator runs here: the status that clients read is the CRD's default.
	t.Run("a just-created At reads as in progress", func(t *testing.T) {
		at := &cnatv1alpha1.At{
			ObjectMeta: metav1.ObjectMeta{Name: "just-created", Namespace: "default"},
			Spec:       cnatv1alpha1.AtSpec{Schedule: "2030-01-02T15:04:05Z", Command: "echo hello"},
		}
		if err := c.Create(t.Context(), at); err != nil {
			t.Fatal(err)
		}
		if v := reconciletest.ReadVerdict(t, c, at); v.Status != kstatus.InProgressStatus || v.Waited {
			t.Errorf("%s; want kstatus InProgress, and kubectl wait waiting", v)
		}
	})
}
