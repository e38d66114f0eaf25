package workload

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestStatefulSetIsGovernedByItsNamesakeServiceAndSelectsItsTemplate(t *testing.T) {
	labels := map[string]string{"app": "db"}
	data := ClaimTemplate("data", resource.MustParse("1Gi"))
	s := StatefulSet("ns", "db", 3, corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}}, data)
	if s.Spec.ServiceName != "db" || *s.Spec.Replicas != 3 || s.Spec.Selector.MatchLabels["app"] != "db" || s.Labels["app"] != "db" ||
		len(s.Spec.VolumeClaimTemplates) != 1 || s.Spec.VolumeClaimTemplates[0].Name != "data" {
		t.Errorf("StatefulSet = %+v", s)
	}
	if data.Spec.AccessModes[0] != corev1.ReadWriteOnce || data.Spec.Resources.Requests.Storage().String() != "1Gi" || data.Spec.StorageClassName != nil {
		t.Errorf("ClaimTemplate = %+v, want ReadWriteOnce of 1Gi of the default class", data)
	}
	svc := HeadlessService("ns", "db", labels, corev1.ServicePort{Name: "peer", Port: 7000})
	if svc.Name != s.Spec.ServiceName || svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses || svc.Spec.Selector["app"] != "db" {
		t.Errorf("HeadlessService = %+v, want the StatefulSet's headless Service, publishing pods not ready", svc)
	}
	pdb := PodDisruptionBudget("ns", "db", intstr.FromInt32(2), labels)
	if pdb.Spec.MinAvailable.IntValue() != 2 || pdb.Spec.Selector.MatchLabels["app"] != "db" || *pdb.Spec.UnhealthyPodEvictionPolicy != policyv1.AlwaysAllow {
		t.Errorf("PodDisruptionBudget = %+v", pdb)
	}
}
