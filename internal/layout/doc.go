// Package layout holds the tests that keep docs/architecture.md's picture of the packages
// true: what each package of the module may import, checked against go list -deps; and
// that no part of the reconcile shell (its shellparts block) uses the unexported
// identifiers another part's file declares, checked by type-checking the package.
package layout
