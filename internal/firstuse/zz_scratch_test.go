package firstuse_test

import (
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func TestScratch(t *testing.T) {
	cp := reconciletest.StartAPIServer(t)
	warnings := &warningRecorder{}
	cfg := rest.CopyConfig(cp.Config)
	cfg.WarningHandlerWithContext = warnings
	c, _ := client.New(cfg, client.Options{})
	ns := cp.RestrictedNamespace(t)
	objs := decode(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: x
  namespace: `+ns+`
bogus: 1
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
  namespace: `+ns+`
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      containers: [{name: c, image: busybox}]
`)
	for _, o := range objs {
		apply(t, c, o, warnings)
	}
}
