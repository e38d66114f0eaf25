package controlplane

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/reconcilekit/reconcilekit/internal/fasttier"
)

// A port another process takes between envtest choosing it and kube-apiserver binding it
// (a busy machine's start-up race) costs a try, not the start.
func TestStartTriesAgainWhenThePortIsTakenBeforeTheAPIServerBindsIt(t *testing.T) {
	fasttier.Skip(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	tries := 0
	defer func(hook func(int, *envtest.Environment)) { beforeTry = hook }(beforeTry)
	beforeTry = func(try int, env *envtest.Environment) {
		tries = try
		if try == 1 {
			env.ControlPlane.APIServer.SecureServing.ListenAddr.Address = "127.0.0.1"
			env.ControlPlane.APIServer.SecureServing.ListenAddr.Port = strconv.Itoa(taken.Addr().(*net.TCPAddr).Port)
		}
	}

	cp, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	}()
	if tries != 2 {
		t.Errorf("started at try %d, want 2 (the first on the taken port)", tries)
	}
	if err := cp.client.List(context.Background(), &corev1.NamespaceList{}); err != nil {
		t.Errorf("the API server started on the second try does not answer: %v", err)
	}
}

// An API server that cannot start says why: the error quotes its last output.
func TestStartQuotesTheAPIServersLastOutputWhenItExits(t *testing.T) {
	fasttier.Skip(t)
	cp, err := Start(context.Background(), Options{APIServerFlags: map[string]string{"no-such-flag": "1"}})
	if err == nil {
		_ = cp.Stop()
		t.Fatal("Start succeeded with a flag kube-apiserver does not know")
	}
	for _, want := range []string{"try 3 of 3", "kube-apiserver's last output", "unknown flag: --no-such-flag"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
}
