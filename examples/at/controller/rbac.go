package controller

// The permissions the At controller needs, and no more; controller-gen turns
// them into config/rbac/role.yaml. Pods are created once and never updated or
// deleted: the command runs exactly once, and the garbage collector removes
// the pod with its At. The finalizers rule lets the controller set
// blockOwnerDeletion on that pod where the OwnerReferencesPermissionEnforcement
// admission plugin is enabled.

// +kubebuilder:rbac:groups=cnat.example.com,resources=ats,verbs=get;list;watch
// +kubebuilder:rbac:groups=cnat.example.com,resources=ats/status,verbs=patch
// +kubebuilder:rbac:groups=cnat.example.com,resources=ats/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
