package controller

// The permissions the Widget controller needs, and no more; controller-gen turns them into
// config/rbac/role.yaml. Add a rule here for each kind the controller comes to own or read.
// The finalizers rule lets the controller set blockOwnerDeletion on the objects it owns
// where the OwnerReferencesPermissionEnforcement admission plugin is enabled.

// +kubebuilder:rbac:groups=starter.example.com,resources=widgets,verbs=get;list;watch
// +kubebuilder:rbac:groups=starter.example.com,resources=widgets/status,verbs=patch
// +kubebuilder:rbac:groups=starter.example.com,resources=widgets/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
