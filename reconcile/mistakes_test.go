package reconcile_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A declaration whose types disagree, or that leaves out the field owner, does not compile:
// the mistake shows in the editor and in `go build`, not when the manager is made. Each
// program of testdata/mistakes makes one; the compiler's message is what docs/testing.md
// shows.
func TestDeclarationMistakesAreCompileErrors(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command, to build the mistakes with: %v", err)
	}
	for _, tc := range []struct {
		name, dir string
		want      []string
	}{{
		name: "a finalizer of another type",
		dir:  "finalizer",
		want: []string{
			`main.go:22:40: cannot use release (value of type func(context.Context, *"k8s.io/api/core/v1".Secret, "github.com/reconcilekit/reconcilekit/reconcile".Scope) requeue.Outcome) as func(ctx context.Context, obj *"k8s.io/api/core/v1".ConfigMap, s "github.com/reconcilekit/reconcilekit/reconcile".Scope) requeue.Outcome value in argument to reconcile.For(&corev1.ConfigMap{}, reconcile.LogicFunc[*corev1.ConfigMap](logic), "copier").WithFinalizer`,
		},
	}, {
		name: "no field owner",
		dir:  "nofieldowner",
		want: []string{
			"main.go:19:41: not enough arguments in call to reconcile.For",
			`want (T, "github.com/reconcilekit/reconcilekit/reconcile".Logic[T], string, ..."github.com/reconcilekit/reconcilekit/reconcile".Option)`,
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			cmd := exec.CommandContext(t.Context(), goTool, "build", "-o", os.DevNull, "./testdata/mistakes/"+tc.dir)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err == nil {
				t.Fatalf("testdata/mistakes/%s compiled", tc.dir)
			}
			t.Logf("the compiler said so in %.1f s:\n%s", time.Since(start).Seconds(), out.String())
			for _, want := range tc.want {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the compiler's message does not say\n%s", want)
				}
			}
		})
	}
}
