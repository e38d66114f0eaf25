// Package layout holds the test that keeps docs/architecture.md's picture of the packages
// true: what each package of the module may import, checked against go list -deps.
package layout
