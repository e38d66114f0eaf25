package controller

// The permissions the Memcached controller needs, and no more; controller-gen
// turns them into config/rbac/role.yaml. The finalizers rule lets the
// controller set blockOwnerDeletion on the objects it owns where the
// OwnerReferencesPermissionEnforcement admission plugin is enabled. Deployments
// and Services are never deleted here: the garbage collector removes them with
// their owner.

// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds,verbs=get;list;watch
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds/status,verbs=patch
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
