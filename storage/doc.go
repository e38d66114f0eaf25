// Package storage migrates the objects of a custom resource to the version their CRD
// stores, after a new version became the storage version: what must happen before an
// old version can stop being served, and before it can be removed from the CRD.
//
// The API server keeps each object in etcd in the version that was the storage version
// when the object was last written, and lists in the CRD's status.storedVersions every
// version that may still be found there. A version cannot leave the CRD while it is in
// storedVersions, and managedFields entries of a version no longer served break
// server-side apply of the objects that carry them (kubernetes/kubernetes#111937).
// Migrate rewrites every object in the storage version, trims storedVersions to it, and
// removes those entries, as cluster-api's CRD migrator and the API server's own
// StorageVersionMigration do; docs/webhooks.md tells the whole story.
package storage
