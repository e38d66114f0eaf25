package controller

// The permissions the PodSet controller needs, and no more; controller-gen
// turns them into config/rbac/role.yaml. The finalizers rule lets the
// controller set blockOwnerDeletion on the Deployments it owns where the
// OwnerReferencesPermissionEnforcement admission plugin is enabled. Pods are
// only read, to list their names in the status; the Deployment makes them.

// +kubebuilder:rbac:groups=apps.example.com,resources=podsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.example.com,resources=podsets/status,verbs=patch
// +kubebuilder:rbac:groups=apps.example.com,resources=podsets/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
