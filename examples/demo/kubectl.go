package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubectlHelp writes an administrator's kubeconfig for the control plane of cfg into a new
// directory and returns what tells a person how to look at the demo with kubectl: the
// export line of KUBECONFIG, ready to paste, a first command, and where kubectl of the
// control plane's version is or how to get it. assets is the directory of the
// control-plane binaries, where make kubectl puts kubectl; empty if unknown. remove
// removes the kubeconfig.
func kubectlHelp(cfg *rest.Config, assets string) (help string, remove func(), err error) {
	dir, err := os.MkdirTemp("", "reconcilekit-demo-")
	if err != nil {
		return "", nil, err
	}
	remove = func() { _ = os.RemoveAll(dir) } // a leftover in the temporary directory is harmless
	kubeconfig := filepath.Join(dir, "kubeconfig")
	const name = "reconcilekit-demo"
	err = clientcmd.WriteToFile(clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{name: {
			Server:                   cfg.Host,
			CertificateAuthorityData: cfg.CAData,
		}},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{name: {
			ClientCertificateData: cfg.CertData,
			ClientKeyData:         cfg.KeyData,
			Token:                 cfg.BearerToken,
		}},
		Contexts:       map[string]*clientcmdapi.Context{name: {Cluster: name, AuthInfo: name, Namespace: "default"}},
		CurrentContext: name,
	}, kubeconfig)
	if err != nil {
		remove()
		return "", nil, fmt.Errorf("writing a kubeconfig: %w", err)
	}

	kubectl, found := "kubectl", false
	if assets != "" {
		path := filepath.Join(assets, "kubectl")
		if info, err := os.Stat(path); err == nil && info.Mode().IsRegular() {
			kubectl, found = path, true
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nTo look with kubectl, in another terminal:\n\n")
	fmt.Fprintf(&b, "  export KUBECONFIG=%s\n", shellQuote(kubeconfig))
	fmt.Fprintf(&b, "  %s get reconcilekit-examples -o wide\n\n", shellQuote(kubectl))
	switch {
	case found:
		fmt.Fprintf(&b, "That kubectl is of the control plane's Kubernetes version, built by 'make kubectl'.\n")
	case assets != "":
		fmt.Fprintf(&b, "'make kubectl' builds kubectl of the control plane's Kubernetes version into %s\n",
			shellQuote(filepath.Join(assets, "kubectl")))
	default:
		fmt.Fprintf(&b, "'make kubectl' builds kubectl of the control plane's Kubernetes version and prints its path.\n")
	}
	return b.String(), remove, nil
}

// plainWord is a word that a shell reads as it is.
var plainWord = regexp.MustCompile(`^[A-Za-z0-9_./:=+@%-]+$`)

// shellQuote quotes s for a POSIX shell, if it needs quoting.
func shellQuote(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
