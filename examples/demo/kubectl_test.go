package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func TestKubectlHelpWritesAKubeconfigAndSaysWhereKubectlIs(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{
		CAData: []byte("ca"), CertData: []byte("cert"), KeyData: []byte("key"),
	}}
	built := t.TempDir()
	if err := os.WriteFile(filepath.Join(built, "kubectl"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, assets, want string
	}{
		{"built", built, filepath.Join(built, "kubectl") + " get reconcilekit-examples"},
		{"not built", "/cache/dir", "'make kubectl' builds kubectl of the control plane's Kubernetes version into /cache/dir/kubectl"},
		{"directory unknown", "", "'make kubectl' builds kubectl of the control plane's Kubernetes version and prints its path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			help, remove, err := kubectlHelp(cfg, tc.assets)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(help)
			if !strings.Contains(help, tc.want) {
				t.Errorf("the help does not say %q", tc.want)
			}
			export := regexp.MustCompile(`(?m)^  export KUBECONFIG=(\S+)$`).FindStringSubmatch(help)
			if export == nil {
				t.Fatal("the help has no export line of KUBECONFIG")
			}
			loaded, err := clientcmd.BuildConfigFromFlags("", export[1])
			if err != nil {
				t.Fatal(err)
			}
			if loaded.Host != cfg.Host || string(loaded.CAData) != "ca" || string(loaded.CertData) != "cert" || string(loaded.KeyData) != "key" {
				t.Errorf("the kubeconfig says %+v, want %+v", loaded, cfg)
			}
			remove()
			if _, err := os.Stat(export[1]); !os.IsNotExist(err) {
				t.Errorf("the kubeconfig is still there after remove: %v", err)
			}
		})
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/reconcilekit-demo-1/kubeconfig": "/tmp/reconcilekit-demo-1/kubeconfig",
		"/home/a b/kubectl":                   "'/home/a b/kubectl'",
		"/it's":                               `'/it'\''s'`,
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
