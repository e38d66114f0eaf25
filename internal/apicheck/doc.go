// Package apicheck holds the test of hack/api-check.sh, the check `make api-check` runs: on
// small modules of its own, in git repositories it makes, it proves that an incompatible
// change to a library package fails the check until CHANGELOG.md lists it under Breaking,
// and that compatible changes, programs and internal packages never do.
package apicheck
