package controlplane

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The binaries an API server needs, and the ones a full cluster needs.
var (
	apiServerBinaries = []string{"etcd", "kube-apiserver"}
	clusterBinaries   = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}
)

// findBinaries returns the directory that holds the named binaries: KUBEBUILDER_ASSETS
// when it is set, as envtest does, or else the most recently built directory that
// `make controlplane` (hack/controlplane/build.sh) left in the user cache directory, which
// every checkout and every program on the machine shares.
func findBinaries(names []string) (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		if missing := missingBinaries(dir, names); len(missing) > 0 {
			return "", fmt.Errorf("controlplane: KUBEBUILDER_ASSETS=%s has no %s: run `make controlplane`, or set KUBEBUILDER_ASSETS to a directory that holds %s",
				dir, strings.Join(missing, ", "), strings.Join(names, ", "))
		}
		return dir, nil
	}

	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("controlplane: finding the control-plane binaries: %w; set KUBEBUILDER_ASSETS", err)
	}
	root := filepath.Join(cache, "reconcilekit", "controlplane")
	entries, _ := os.ReadDir(root) // a missing directory is reported below, with the fix
	var found string
	var newest time.Time
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		info, err := e.Info()
		if err != nil || !e.IsDir() || len(missingBinaries(dir, names)) > 0 {
			continue
		}
		if found == "" || info.ModTime().After(newest) {
			found, newest = dir, info.ModTime()
		}
	}
	if found == "" {
		return "", fmt.Errorf("controlplane: no directory under %s holds %s: run `make controlplane` in a reconcilekit checkout, which builds them from source into it (about 15 minutes, once a machine), or set KUBEBUILDER_ASSETS to a directory that holds them",
			root, strings.Join(names, ", "))
	}
	return found, nil
}

// missingBinaries returns the names that are not executable files in dir.
func missingBinaries(dir string, names []string) []string {
	var missing []string
	for _, name := range names {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil || info.IsDir() || info.Mode().Perm()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	return missing
}
