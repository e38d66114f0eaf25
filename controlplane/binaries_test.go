package controlplane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeBinaries creates dir holding empty executables with the names, modified at mtime.
func fakeBinaries(t *testing.T, dir string, mtime time.Time, names ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(dir, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func TestFindBinariesHonoursKubebuilderAssets(t *testing.T) {
	dir := t.TempDir()
	fakeBinaries(t, dir, time.Now(), clusterBinaries...)
	t.Setenv("KUBEBUILDER_ASSETS", dir)

	got, err := findBinaries(clusterBinaries)
	if err != nil || got != dir {
		t.Errorf("got %q, %v; want %q", got, err, dir)
	}
}

func TestFindBinariesPicksTheNewestCompleteCacheDirectory(t *testing.T) {
	home := t.TempDir()
	t.Setenv("KUBEBUILDER_ASSETS", "")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(cache, "reconcilekit", "controlplane")
	now := time.Now()
	fakeBinaries(t, filepath.Join(root, "old"), now.Add(-2*time.Hour), clusterBinaries...)
	fakeBinaries(t, filepath.Join(root, "new"), now.Add(-time.Hour), clusterBinaries...)
	fakeBinaries(t, filepath.Join(root, "building"), now, apiServerBinaries...)

	tests := []struct {
		name     string
		binaries []string
		want     string
	}{
		{"for a cluster, the newest that holds all five", clusterBinaries, "new"},
		{"for an API server, the newest that holds etcd and kube-apiserver", apiServerBinaries, "building"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findBinaries(tt.binaries)
			if want := filepath.Join(root, tt.want); err != nil || got != want {
				t.Errorf("got %q, %v; want %q", got, err, want)
			}
		})
	}
}

func TestMissingBinariesAreAnErrorThatSaysHowToBuildThem(t *testing.T) {
	partial := t.TempDir()
	fakeBinaries(t, partial, time.Now(), apiServerBinaries...)
	tests := []struct {
		name   string
		assets string
		want   []string
	}{
		{"KUBEBUILDER_ASSETS without some", partial, []string{"make controlplane", "kube-controller-manager, kube-scheduler, kwok"}},
		{"no cache directory", "", []string{"make controlplane", "KUBEBUILDER_ASSETS"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBEBUILDER_ASSETS", tt.assets)
			t.Setenv("HOME", t.TempDir())
			t.Setenv("XDG_CACHE_HOME", t.TempDir())

			_, err := Start(t.Context(), Options{Nodes: 1})

			if err == nil {
				t.Fatal("Start succeeded")
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}
