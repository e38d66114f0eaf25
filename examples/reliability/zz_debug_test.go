package reliability

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestZZDebugNodes(t *testing.T) {
	admin := cp.Client(t, scheme)
	ns := cp.Namespace(t)
	memcachedOperator.start(t, memcachedOperator.config(t), ns)
	memcachedOperator.create(t, admin, ns, "m", 3)
	for i := 0; i < 12; i++ {
		var nodes corev1.NodeList
		_ = admin.List(t.Context(), &nodes)
		for _, n := range nodes.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady {
					t.Logf("%s node %s ready=%s hb=%s taints=%v", time.Now().Format("15:04:05"), n.Name, c.Status, c.LastHeartbeatTime.Format("15:04:05"), n.Spec.Taints)
				}
			}
			var l coordinationv1.Lease
			_ = admin.Get(t.Context(), client.ObjectKey{Namespace: "kube-node-lease", Name: n.Name}, &l)
			if l.Spec.RenewTime != nil {
				t.Logf("  lease renew %s", l.Spec.RenewTime.Format("15:04:05"))
			}
		}
		ps, _ := pods(t.Context(), admin, ns)
		for _, p := range ps {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady {
					t.Logf("  pod %s %s ready=%s %s %s", p.Name, p.Status.Phase, c.Status, c.Reason, c.Message)
				}
			}
		}
		time.Sleep(5 * time.Second)
	}
}
