package reconcile

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/reconcilekit/reconcilekit/storage"
)

// WithStorageMigration has the manager migrate the stored objects of the controller's
// kind to its CRD's storage version when it starts (storage.Migrate, with opts): every
// object rewritten in the storage version, status.storedVersions trimmed to it, and
// managedFields entries of versions no longer served removed. It runs on the leader only,
// beside the controllers, which need not wait for it: an object is read in the reconciled
// version whatever version etcd holds it in. A migration that fails (the conversion
// webhook it needs not served yet, the API server unavailable) is logged and run again,
// after 1 s, doubling up to 5 min, until it succeeds or the manager stops; as it is
// idempotent, each run finishes what the one before left.
//
// It writes through the manager's config, at the pace its QPS and Burst allow
// (ctrl.GetConfig's are unlimited, leaving the pace to the API server's priority and
// fairness). The operator's role needs what storage.Migrate names.
func WithStorageMigration(opts ...storage.Option) Option {
	return func(o *options) { o.migration = &opts }
}

// migrationRetry is how long a failed migration waits before it runs again: doubled
// after each failure, up to its Cap.
var migrationRetry = wait.Backoff{Duration: time.Second, Factor: 2, Steps: 32, Cap: 5 * time.Minute}

// addMigration adds to mgr the storage migration of the controller's kind, if it is
// declared.
func (c *Controller[T]) addMigration(mgr manager.Manager) error {
	opts := c.options().migration
	if opts == nil {
		return nil
	}
	gvk, err := apiutil.GVKForObject(c.object, mgr.GetScheme())
	if err != nil {
		return err
	}
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		logger := log.FromContext(ctx).WithValues("controller", c.kind())
		ctx = log.IntoContext(ctx, logger)
		backoff := migrationRetry
		for {
			mapping, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
			if err == nil {
				// The CRD is named after the kind's resource and group.
				_, err = storage.Migrate(ctx, mgr.GetConfig(), mapping.Resource.Resource+"."+gvk.Group, *opts...)
			}
			if err == nil {
				return nil
			}
			delay := backoff.Step()
			logger.Error(err, "migrating the stored objects", "retryAfter", delay)
			select {
			case <-ctx.Done():
				return nil // a manager that stops is no migration that fails
			case <-time.After(delay):
			}
		}
	}))
}
