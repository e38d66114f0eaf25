// Package reliability proves that the example operators, and the library they are built
// from, keep working unattended: through API errors, crashes, an API server restart and
// a change of leader, against foreign objects and bad input, when their objects are
// deleted at any moment, and with no more permission than their generated roles grant.
//
// Each scenario is one test against a full local control plane. `go test` runs a short
// pass; `go test -args -full`, which `make test-reliability` runs, pushes each scenario
// to the sizes the reliability issue names (100 objects of each kind, 50 crashes,
// reconciles counted over a minute) and ends with the report of ./report. What each
// scenario checks, and what it found, is in docs/reliability.md.
package reliability
