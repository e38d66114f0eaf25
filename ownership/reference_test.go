package ownership

import (
	"errors"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func owner(namespace, uid string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "owner", UID: k8stypes.UID(uid)}}
}

func TestSetController(t *testing.T) {
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "Secret", Name: "other", UID: "other", Controller: ptr.To(true)}
	tests := []struct {
		name    string
		owner   client.Object
		obj     client.Object
		wantErr func(error) bool
		refs    int
	}{
		{name: "sets the controller on a namespaced object", owner: owner("ns", "1"), obj: deployment(), refs: 1},
		{name: "setting the same controller again changes nothing", owner: owner("ns", "1"), obj: deployment(func(d *appsv1.Deployment) {
			_ = SetController(owner("ns", "1"), d, scheme.Scheme)
		}), refs: 1},
		{name: "keeps owner references that are not controllers", owner: owner("ns", "1"), obj: deployment(func(d *appsv1.Deployment) {
			d.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: "s", UID: "s"}}
		}), refs: 2},
		{name: "a cluster-scoped owner may own a namespaced object", owner: owner("", "1"), obj: deployment(), refs: 1},
		{name: "refuses an owner in another namespace", owner: owner("elsewhere", "1"), obj: deployment(), wantErr: IsInvalidOwner},
		{name: "refuses a namespaced owner of a cluster-scoped object", owner: owner("ns", "1"), obj: &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "r"}}, wantErr: IsInvalidOwner},
		{name: "refuses an owner that was never read from the API server", owner: owner("ns", ""), obj: deployment(), wantErr: IsInvalidOwner},
		{name: "refuses an object another controller controls", owner: owner("ns", "1"), obj: deployment(func(d *appsv1.Deployment) {
			d.OwnerReferences = []metav1.OwnerReference{other}
		}), wantErr: IsNotControlled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := SetController(tt.owner, tt.obj, scheme.Scheme)
			if tt.wantErr != nil {
				if !tt.wantErr(err) {
					t.Fatalf("SetController error = %v, want a typed error", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("SetController: %v", err)
			}
			if !IsControlledBy(tt.obj, tt.owner) {
				t.Errorf("object is not controlled by the owner: %v", tt.obj.GetOwnerReferences())
			}
			if got := len(tt.obj.GetOwnerReferences()); got != tt.refs {
				t.Errorf("object has %d owner references, want %d", got, tt.refs)
			}
		})
	}
}

func TestIsControlledByComparesUIDs(t *testing.T) {
	d := deployment()
	if err := SetController(owner("ns", "1"), d, scheme.Scheme); err != nil {
		t.Fatal(err)
	}
	if IsControlledBy(d, owner("ns", "2")) {
		t.Error("an owner recreated under the same name (new UID) counts as the controller")
	}
	if IsControlledBy(d, owner("ns", "")) {
		t.Error("an owner without a UID counts as the controller")
	}
}

func TestErrorsAreRecognisedWhenWrapped(t *testing.T) {
	notControlled := fmt.Errorf("ensure: %w", &NotControlledError{Kind: "Deployment", Namespace: "ns", Name: "web"})
	invalid := fmt.Errorf("ensure: %w", &InvalidOwnerError{Owner: "ns/a", Object: "b/c", Reason: "r"})
	if !IsNotControlled(notControlled) || IsNotControlled(invalid) || IsNotControlled(errors.New("x")) {
		t.Error("IsNotControlled does not recognise exactly the wrapped *NotControlledError")
	}
	if !IsInvalidOwner(invalid) || IsInvalidOwner(notControlled) {
		t.Error("IsInvalidOwner does not recognise exactly the wrapped *InvalidOwnerError")
	}
}

func TestNotControlledErrorSaysWhoControls(t *testing.T) {
	tests := map[string]struct {
		err  NotControlledError
		want string
	}{
		"orphan": {NotControlledError{Kind: "Deployment", Namespace: "ns", Name: "web"},
			"Deployment ns/web exists and has no controller; it is left alone"},
		"controlled": {NotControlledError{Kind: "Deployment", Namespace: "ns", Name: "web", Controller: &metav1.OwnerReference{Kind: "ReplicaSet", Name: "x"}},
			`Deployment ns/web exists and is controlled by ReplicaSet "x"; it is left alone`},
	}
	for name, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%s: Error() = %q, want %q", name, got, tt.want)
		}
	}
}
