package controller

// The permissions the Keyval controller needs, and no more; controller-gen turns them into
// config/rbac/role.yaml. patch on keyvals adds and removes the Finalizer. The finalizers
// rule lets the controller set blockOwnerDeletion on the objects it owns where the
// OwnerReferencesPermissionEnforcement admission plugin is enabled. Its children are
// deleted by the garbage collector with it, except what the cleanup of a Keyval whose
// volumes go with it deletes: the StatefulSet, then the claims, which it lists uncached.

// +kubebuilder:rbac:groups=store.example.com,resources=keyvals,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=store.example.com,resources=keyvals/status,verbs=patch
// +kubebuilder:rbac:groups=store.example.com,resources=keyvals/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=list;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
