package controller

// The permissions the Tenant controller needs, and no more; controller-gen turns them into
// config/rbac/role.yaml. The finalizers rule lets the controller set blockOwnerDeletion on
// the objects it owns where the OwnerReferencesPermissionEnforcement admission plugin is
// enabled. Binding the edit ClusterRole takes bind on it: the controller holds none of
// edit's permissions itself.

// +kubebuilder:rbac:groups=tenancy.acme.io,resources=tenants,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=tenancy.acme.io,resources=tenants/status,verbs=patch
// +kubebuilder:rbac:groups=tenancy.acme.io,resources=tenants/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=resourcequotas,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=list
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=edit
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
