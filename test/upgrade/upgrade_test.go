// Package upgrade rehearses the upgrades of the example operators (package rehearsal):
// the Memcached operator from its first form, v1alpha1 alone, kept in testdata, to the
// one in the tree.
package upgrade

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/yaml"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/rehearsal"
)

// The local cluster logs through controller-runtime's logger, which has nothing to say here.
func init() { ctrl.SetLogger(logr.Discard()) }

// fixture is the Memcached operator as it was before its second version: its api,
// controller, cmd and CRD.
const fixture = "testdata/memcached-v1alpha1"

// build builds the Go command of pkg into the test's directory, with the files of
// replace (a path of the module to the content that replaces it) in place of the tree's.
func build(t *testing.T, pkg string, replace map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "manager")
	args := []string{"build", "-o", bin}
	if len(replace) > 0 {
		overlay := map[string]map[string]string{"Replace": {}}
		for path, content := range replace {
			abs, err := filepath.Abs(path)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, filepath.Base(path))
			if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			overlay["Replace"][abs] = file
		}
		data, _ := json.Marshal(overlay) // maps of strings always marshal
		file := filepath.Join(dir, "overlay.json")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "-overlay="+file)
	}
	dir, target := "", pkg
	// An example's command builds in the examples' module, with its requirements.
	if rest, ok := strings.CutPrefix(pkg, "../../examples/"); ok {
		dir, target = "../../examples", "./"+rest
	}
	cmd := exec.CommandContext(t.Context(), "go", append(args, target)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// manager runs a Memcached manager binary as the rehearsal wants it: probes on the
// address the rehearsal gives, no metrics.
func manager(bin string, crds string) rehearsal.Build {
	return rehearsal.Build{
		Command: []string{bin, "-health-probe-bind-address=" + rehearsal.ProbePlaceholder, "-metrics-bind-address=0"},
		CRDs:    []string{crds},
	}
}

// rehearse runs the rehearsal of the upgrade from the fixture to newBuild, with the
// objects of testdata/cluster.
func rehearse(t *testing.T, newBuild rehearsal.Build) rehearsal.Report {
	t.Helper()
	objects, err := rehearsal.ReadObjects("testdata/cluster")
	if err != nil {
		t.Fatal(err)
	}
	r := rehearsal.Rehearsal{
		Objects: objects,
		Old:     manager(build(t, "./"+fixture+"/cmd", nil), filepath.Join(fixture, "config", "crd")),
		New:     newBuild,
		Settle:  3 * time.Second,
	}
	if testing.Verbose() {
		r.Output = os.Stderr
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rep, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the rehearsal's report:\n%s", rep)
	return rep
}

// deployed renders the operator's manifests in dir with kustomize, as a cluster gets them,
// and returns files of its CustomResourceDefinitions and of its webhook configurations,
// for a build that serves webhooks.
func deployed(t *testing.T, dir string) (crds, webhooks string) {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", "tool", "-modfile=../../hack/tools/go.mod", "kustomize", "build", dir).Output()
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	rendered := filepath.Join(t.TempDir(), "rendered.yaml")
	if err := os.WriteFile(rendered, out, 0o644); err != nil {
		t.Fatal(err)
	}
	objects, err := rehearsal.ReadObjects(rendered)
	if err != nil {
		t.Fatal(err)
	}
	var crd, hooks []byte
	for _, obj := range objects {
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		switch obj.GetKind() {
		case "CustomResourceDefinition":
			crd = append(append(crd, "---\n"...), data...)
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			hooks = append(append(hooks, "---\n"...), data...)
		}
	}
	crds, webhooks = filepath.Join(t.TempDir(), "crds.yaml"), filepath.Join(t.TempDir(), "webhooks.yaml")
	if err := os.WriteFile(crds, crd, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(webhooks, hooks, 0o644); err != nil {
		t.Fatal(err)
	}
	return crds, webhooks
}

func TestUpgradingTheMemcachedOperatorToItsSecondVersionRestartsNothing(t *testing.T) {
	reconciletest.SkipShort(t)
	// The new build as config/default deploys it: serving its webhooks (the conversion of
	// the v1alpha1 Memcacheds the old build made among them) with a certificate of its own,
	// here on the loopback interface the rehearsal's API server reaches it at.
	crds, webhooks := deployed(t, filepath.Join("..", "..", "examples", "memcached", "config", "default"))
	newBuild := manager(build(t, "../../examples/memcached/cmd", nil), crds)
	newBuild.Command = append(newBuild.Command, "-webhook-namespace=default", "-webhook-bind-address=127.0.0.1:"+rehearsal.WebhookPortPlaceholder)
	newBuild.Webhooks = []string{webhooks}
	rep := rehearse(t, newBuild)
	for _, w := range rep.Upgrade {
		if w.Kind == "Deployment" || w.Kind == "Service" {
			t.Errorf("the new build wrote a child: %s %s %s %v", w.Verb, w.Kind, w.Object(), w.Changes)
		}
	}
	// What the new build writes is its certificate and the authority in its webhooks'
	// caBundles, and the storage migration: each Memcached stored again as v1beta1, and
	// the CRD's storedVersions trimmed to it.
	want := `the old build, restarted, writes nothing
the new build writes:
  rewrites 1 CustomResourceDefinition: spec.conversion.webhook.clientConfig.caBundle added (memcacheds.cache.example.com)
  updates the status of 1 CustomResourceDefinition: status.storedVersions changed (memcacheds.cache.example.com)
  updates the status of 3 Memcacheds without a change (shop/cache, shop/carts, shop/sessions)
  rewrites 1 MutatingWebhookConfiguration: webhooks[default.memcacheds.cache.example.com].clientConfig.caBundle added (memcached-mutating-webhook-configuration)
  creates 1 Secret (default/memcached-webhook-certificates)
  rewrites 1 ValidatingWebhookConfiguration: webhooks[validate.memcacheds.cache.example.com].clientConfig.caBundle added (memcached-validating-webhook-configuration)
`
	if got := rep.String(); got != want {
		t.Errorf("the report says\n%s\nwant\n%s", got, want)
	}
}

func TestAnUpgradeThatChangesAPodTemplatesDefaultIsReportedAsRestarts(t *testing.T) {
	reconciletest.SkipShort(t)
	source := filepath.Join(fixture, "controller", "memcached.go")
	code, err := os.ReadFile(source)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(code), `"-m=64"`, `"-m=128"`, 1)
	if changed == string(code) {
		t.Fatalf("%s no longer holds the default -m=64 that the test changes", source)
	}
	bad := manager(build(t, "./"+fixture+"/cmd", map[string]string{source: changed}), filepath.Join(fixture, "config", "crd"))

	// The Memcacheds' statuses follow the rollouts the restarts begin: whether the
	// operator sees a rollout under way, and writes it, depends on when it looks. So the
	// line of their status is left out, and only that line.
	var got string
	for line := range strings.Lines(rehearse(t, bad).String()) {
		if !strings.HasPrefix(line, "  updates the status of 3 Memcacheds: ") {
			got += line
		}
	}
	want := `the old build, restarted, writes nothing
the new build writes:
  restarts 3 Deployments: spec.template.spec.containers[memcached].command changed (shop/cache, shop/carts, shop/sessions)
`
	if got != want {
		t.Errorf("the report says\n%s\nwant\n%s", got, want)
	}
}
