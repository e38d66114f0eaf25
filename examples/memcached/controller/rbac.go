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

// What cmd/main.go needs besides the controller, each limited by resourceNames to the
// operator's own objects, named as config/default names them (its namePrefix memcached-):
// its webhooks' certificates (webhook.Certificates), kept in a Secret shipped empty with
// the manifests (so it needs no create), and put into its webhook configurations and the
// CRD's conversion; and the storage migration (reconcile.WithStorageMigration), which
// rewrites every Memcached through its status and trims the CRD's storedVersions.

// +kubebuilder:rbac:groups="",namespace=memcached-system,resources=secrets,verbs=get;update,resourceNames=memcached-webhook-certificates
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=get;update,resourceNames=memcached-mutating-webhook-configuration
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;update,resourceNames=memcached-validating-webhook-configuration
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;update,resourceNames=memcacheds.cache.example.com
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions/status,verbs=update,resourceNames=memcacheds.cache.example.com
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds;memcacheds/status,verbs=get;list;patch
