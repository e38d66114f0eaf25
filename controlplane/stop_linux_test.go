package controlplane

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/reconcilekit/reconcilekit/internal/fasttier"
)

// processesMentioning returns the names of the running processes whose command line
// contains s, by process id.
func processesMentioning(s string) map[int]string {
	entries, _ := os.ReadDir("/proc")
	found := make(map[int]string)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cmdline, []byte(s)) {
			continue
		}
		argv0, _, _ := bytes.Cut(cmdline, []byte{0})
		found[pid] = filepath.Base(string(argv0))
	}
	return found
}

// expectCluster fails the test unless every binary of a cluster runs in dir.
func expectCluster(t *testing.T, dir string) {
	t.Helper()
	running := slices.Sorted(maps.Values(processesMentioning(dir)))
	if want := slices.Sorted(slices.Values(clusterBinaries)); !slices.Equal(running, want) {
		t.Fatalf("running %v, want %v", running, want)
	}
}

// expectNothingLeft fails the test if a process still runs in dir, or dir remains.
func expectNothingLeft(dir string) error {
	if left := processesMentioning(dir); len(left) > 0 {
		return fmt.Errorf("still running: %v", left)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		return fmt.Errorf("%s remains (%v)", dir, err)
	}
	return nil
}

func TestStopEndsEveryProcess(t *testing.T) {
	fasttier.Skip(t)
	cp, err := Start(t.Context(), Options{Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	expectCluster(t, cp.dir)

	if err := cp.Stop(); err != nil {
		t.Fatal(err)
	}

	if err := expectNothingLeft(cp.dir); err != nil {
		t.Error(err)
	}
}

func TestAbandonedClusterDiesWithItsProgram(t *testing.T) {
	fasttier.Skip(t)
	child := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), abandonEnv+"=1")
	var stderr bytes.Buffer
	child.Stderr = &stderr
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = child.Wait()
		t.Fatalf("the child started no cluster: %v\n%s", err, &stderr)
	}
	dir := strings.TrimSpace(line)
	expectCluster(t, dir)

	_ = stdin.Close() // the child panics
	if err := child.Wait(); err == nil || !strings.Contains(stderr.String(), "abandoning a cluster") {
		t.Fatalf("the child did not panic: %v\n%s", err, &stderr)
	}

	// The watchdog kills the processes at once and removes the directory a second later.
	err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return expectNothingLeft(dir) == nil, nil
	})
	if err != nil {
		t.Fatal(expectNothingLeft(dir))
	}
}
