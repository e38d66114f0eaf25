package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Result is what a migration did.
type Result struct {
	// Objects is how many objects of the kind the migration found.
	Objects int
	// Rewritten is how many of them the API server stored anew. A rewrite of an object
	// already stored in the storage version is not stored (its resourceVersion does not
	// change), so a second run rewrites none.
	Rewritten int
	// Cleaned is how many had managedFields entries of versions no longer served removed.
	Cleaned int
	// StoredVersions is the CRD's status.storedVersions when the migration ended.
	StoredVersions []string
}

// Option changes how Migrate works.
type Option func(*options)

type options struct {
	workers  int
	pageSize int64
}

// WithWorkers sets how many objects are written at once; 4 unless set. More is faster
// until the API server, or the conversion webhook each rewrite calls, is the bottleneck.
func WithWorkers(n int) Option {
	return func(o *options) { o.workers = max(n, 1) }
}

// WithPageSize sets how many objects are listed at a time; 500 unless set. Only one page
// is held in memory.
func WithPageSize(n int64) Option {
	return func(o *options) { o.pageSize = max(n, 1) }
}

// conflictRetries is how many times an object written by someone else since it was read
// is read and written again before the migration gives it up.
const conflictRetries = 5

// Migrate migrates the objects of the custom resource the CRD named crd defines (for
// example "gadgets.webhooks.reconcilekit.io") to the CRD's storage version, through the
// API server cfg reaches. It is the building block an operator runs at start-up, before
// its controllers, or on demand; it blocks until it is done. The rules:
//
//   - Every object of the kind, in every namespace, is listed (metadata only, in pages)
//     and rewritten by a write that changes nothing: a merge patch that holds only the
//     object's resourceVersion, so that the API server reads the object, converts it, and
//     stores it again in the storage version. It goes through the status subresource when
//     the version has one, so that the kind's admission webhooks, which usually do not
//     intercept status, neither change nor refuse a write that must change nothing. A
//     conflict (someone wrote the object since it was read) is retried quietly on a fresh
//     read; an object deleted meanwhile is skipped.
//   - Every managedFields entry whose apiVersion is a version the CRD no longer serves is
//     removed, by a JSON patch of the object's managedFields with its resourceVersion as
//     precondition (which also rewrites it, so no second write is needed). An object left
//     with no entry keeps one for metadata.name, owned by the first manager removed and
//     the storage version, as cluster-api does: an object without managedFields would
//     have its first server-side apply make an owner of every field.
//   - Only once every object is rewritten does status.storedVersions become the storage
//     version alone, with the CRD's resourceVersion as precondition, and only if the
//     storage version is still the one the migration started with. If storedVersions is
//     already that, nothing is rewritten: only managedFields are cleaned.
//
// Migrate writes nothing but the kind's objects and the CRD's status.
//
// It is idempotent, so a migration interrupted (a crash, a cancelled context, an error)
// is finished by running it again: storedVersions still names the old version, so the
// next run rewrites every object again, and the API server does not store the rewrite of
// an object already in the storage version (it finds the encoded object equal to the
// stored one): the rerun costs a request per object and an etcd write only for the
// objects not yet migrated. Result.Rewritten counts those.
//
// An error that leaves objects not rewritten, or storedVersions not trimmed, is
// recognised by IsIncomplete. Run it once every API server serves the CRD with the new
// storage version: a write that a server still on the old one handles stores the old
// version again.
//
// cfg's user needs: get of the CRD and update of its status
// (customresourcedefinitions/status); list, get and patch of the kind, and patch of its
// status subresource. The requests go at the pace cfg's QPS and Burst allow.
func Migrate(ctx context.Context, cfg *rest.Config, crd string, opts ...Option) (Result, error) {
	o := options{workers: 4, pageSize: 500}
	for _, opt := range opts {
		opt(&o)
	}
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return Result{}, fmt.Errorf("storage: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return Result{}, fmt.Errorf("storage: %w", err)
	}
	m := &migration{c: c, opts: o, log: logr.FromContextOrDiscard(ctx).WithValues("crd", crd)}
	return m.run(ctx, crd)
}

// migration is one run of Migrate.
type migration struct {
	c    client.Client
	opts options
	log  logr.Logger

	group, storage string
	version        schema.GroupVersionKind // the served version objects are read and written in
	status         bool                    // whether version has a status subresource
	served         map[string]bool         // "group/version" of each served version
	trim           bool                    // whether storedVersions is to be trimmed

	mu     sync.Mutex
	result Result
	failed []error
}

func (m *migration) run(ctx context.Context, name string) (Result, error) {
	start := time.Now()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := m.c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		return Result{}, fmt.Errorf("storage: reading CRD %s: %w", name, err)
	}
	if err := m.plan(crd); err != nil {
		return Result{}, err
	}
	m.result.StoredVersions = crd.Status.StoredVersions
	if err := m.objects(ctx, crd.Spec.Names.ListKind); err != nil {
		return m.result, &incompleteError{crd: name, err: err}
	}
	if m.trim {
		if err := m.trimStoredVersions(ctx, name); err != nil {
			return m.result, &incompleteError{crd: name, err: err}
		}
	}
	m.log.Info("storage migrated", "storageVersion", m.storage, "objects", m.result.Objects,
		"rewritten", m.result.Rewritten, "cleaned", m.result.Cleaned, "storedVersions", m.result.StoredVersions, "duration", time.Since(start))
	return m.result, nil
}

// plan reads from crd what the migration does.
func (m *migration) plan(crd *apiextensionsv1.CustomResourceDefinition) error {
	m.group = crd.Spec.Group
	m.served = map[string]bool{}
	var served []apiextensionsv1.CustomResourceDefinitionVersion
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			m.storage = v.Name
		}
		if v.Served {
			m.served[schema.GroupVersion{Group: m.group, Version: v.Name}.String()] = true
			served = append(served, v)
		}
	}
	if m.storage == "" || len(served) == 0 {
		return fmt.Errorf("storage: CRD %s has no storage version or no served version", crd.Name)
	}
	// The storage version if it is served, as it is the one no conversion is needed to
	// write; any served version otherwise: a rewrite stores the storage version whatever
	// version it is sent in.
	v := served[0]
	if i := slices.IndexFunc(served, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == m.storage }); i >= 0 {
		v = served[i]
	}
	m.version = schema.GroupVersionKind{Group: m.group, Version: v.Name, Kind: crd.Spec.Names.Kind}
	m.status = v.Subresources != nil && v.Subresources.Status != nil
	m.trim = !slices.Equal(crd.Status.StoredVersions, []string{m.storage})
	return nil
}

// objects migrates every object of the kind, a page at a time, and returns what failed.
func (m *migration) objects(ctx context.Context, listKind string) error {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(m.version.GroupVersion().WithKind(listKind))
	for {
		if err := m.c.List(ctx, list, client.Limit(m.opts.pageSize), client.Continue(list.Continue)); err != nil {
			return fmt.Errorf("listing %s: %w", m.version.Kind, err)
		}
		m.page(ctx, list.Items)
		if err := ctx.Err(); err != nil {
			return err
		}
		if list.Continue == "" {
			break
		}
	}
	if len(m.failed) > 0 {
		return fmt.Errorf("%d of %d %s objects not migrated: %w", len(m.failed), m.result.Objects, m.version.Kind, errors.Join(m.failed[:min(len(m.failed), 3)]...))
	}
	return nil
}

// page migrates the objects of one page, m.opts.workers at a time.
func (m *migration) page(ctx context.Context, items []metav1.PartialObjectMetadata) {
	next := make(chan *metav1.PartialObjectMetadata)
	var wg sync.WaitGroup
	for range min(m.opts.workers, len(items)) {
		wg.Go(func() {
			for obj := range next {
				rewritten, cleaned, err := m.object(ctx, obj)
				m.mu.Lock()
				m.result.Objects++
				if rewritten {
					m.result.Rewritten++
				}
				if cleaned {
					m.result.Cleaned++
				}
				if err != nil {
					m.failed = append(m.failed, err)
				}
				m.mu.Unlock()
			}
		})
	}
	for i := range items {
		if ctx.Err() != nil {
			break
		}
		items[i].SetGroupVersionKind(m.version)
		next <- &items[i]
	}
	close(next)
	wg.Wait()
}

// object migrates obj, read again after a conflict, and reports whether the API server
// stored it anew and whether its managedFields were cleaned.
func (m *migration) object(ctx context.Context, obj *metav1.PartialObjectMetadata) (rewritten, cleaned bool, err error) {
	for range conflictRetries {
		before := obj.ResourceVersion
		managed, stale := m.fresh(obj.ManagedFields)
		switch {
		case stale:
			err = m.clean(ctx, obj, managed)
		case m.trim:
			err = m.rewrite(ctx, obj)
		default:
			return false, false, nil
		}
		switch {
		case err == nil:
			return obj.ResourceVersion != before, stale, nil
		case apierrors.IsNotFound(err):
			return false, false, nil // gone: nothing left to migrate
		case !apierrors.IsConflict(err):
			return false, false, fmt.Errorf("%s: %w", client.ObjectKeyFromObject(obj), err)
		}
		if err = m.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			if apierrors.IsNotFound(err) {
				return false, false, nil
			}
			return false, false, fmt.Errorf("%s: %w", client.ObjectKeyFromObject(obj), err)
		}
	}
	return false, false, fmt.Errorf("%s: written by others %d times while it was migrated: %w", client.ObjectKeyFromObject(obj), conflictRetries, err)
}

// rewrite writes obj back unchanged, for the API server to store it in the storage
// version.
func (m *migration) rewrite(ctx context.Context, obj *metav1.PartialObjectMetadata) error {
	// The resourceVersion makes the write conditional: it fails with a conflict if the
	// object changed since it was read, rather than rewrite it blindly.
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": obj.ResourceVersion}})
	if err != nil {
		return err
	}
	if m.status {
		return m.c.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
	}
	return m.c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
}

// clean replaces obj's managedFields with managed.
func (m *migration) clean(ctx context.Context, obj *metav1.PartialObjectMetadata, managed []metav1.ManagedFieldsEntry) error {
	if len(managed) == 0 {
		first := obj.ManagedFields[0]
		managed = []metav1.ManagedFieldsEntry{{
			Manager: first.Manager, Operation: first.Operation,
			APIVersion: schema.GroupVersion{Group: m.group, Version: m.storage}.String(),
			Time:       &metav1.Time{Time: time.Now().Truncate(time.Second)},
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:name":{}}}`),
		}}
	}
	// managedFields can be set only through the object itself, not a subresource.
	patch, err := json.Marshal([]map[string]any{
		{"op": "replace", "path": "/metadata/managedFields", "value": managed},
		{"op": "replace", "path": "/metadata/resourceVersion", "value": obj.ResourceVersion},
	})
	if err != nil {
		return err
	}
	return m.c.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, patch))
}

// fresh returns the entries of managed whose version is served, and whether any is not.
func (m *migration) fresh(managed []metav1.ManagedFieldsEntry) ([]metav1.ManagedFieldsEntry, bool) {
	kept := slices.DeleteFunc(slices.Clone(managed), func(e metav1.ManagedFieldsEntry) bool { return !m.served[e.APIVersion] })
	return kept, len(kept) != len(managed)
}

// trimStoredVersions makes the CRD's storedVersions the storage version alone, unless
// the storage version changed since the migration began.
func (m *migration) trimStoredVersions(ctx context.Context, name string) error {
	for range conflictRetries {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := m.c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return fmt.Errorf("reading CRD %s: %w", name, err)
		}
		i := slices.IndexFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Storage })
		if i < 0 || crd.Spec.Versions[i].Name != m.storage {
			return fmt.Errorf("the storage version of CRD %s changed from %s during the migration: run it again", name, m.storage)
		}
		crd.Status.StoredVersions = []string{m.storage}
		err := m.c.Status().Update(ctx, crd) // conditional on the resourceVersion read
		if err == nil {
			m.result.StoredVersions = crd.Status.StoredVersions
			return nil
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("trimming the storedVersions of CRD %s: %w", name, err)
		}
	}
	return fmt.Errorf("trimming the storedVersions of CRD %s: written by others %d times meanwhile", name, conflictRetries)
}

// IsIncomplete reports whether err is from a migration that stopped before it was done:
// some objects may not be rewritten, and storedVersions was not trimmed. Running Migrate
// again finishes it.
func IsIncomplete(err error) bool {
	var i interface{ Incomplete() bool }
	return errors.As(err, &i) && i.Incomplete()
}

// incompleteError is an error of a migration that stopped before it was done.
type incompleteError struct {
	crd string
	err error
}

func (e *incompleteError) Error() string {
	return fmt.Sprintf("storage: the migration of CRD %s is incomplete (run it again to finish it): %v", e.crd, e.err)
}

func (e *incompleteError) Unwrap() error { return e.err }

// Incomplete reports that the migration stopped before it was done.
func (e *incompleteError) Incomplete() bool { return true }
