package controller

// The permissions the CronJob controller needs, and no more; controller-gen turns
// them into config/rbac/role.yaml. Jobs are created and deleted (pruned, replaced), never
// updated: a Job's template cannot change. The finalizers rule lets the controller set
// blockOwnerDeletion on its Jobs where the OwnerReferencesPermissionEnforcement admission
// plugin is enabled.

// +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs/status,verbs=patch
// +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
