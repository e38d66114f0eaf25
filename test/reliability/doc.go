// Package reliability proves that the example operators, and the library they are built
// from, keep working unattended: through API errors, crashes, an API server or etcd
// restart and a change of leader; through a partition, a slow API server, watches cut or
// expired, a stepped clock, a thousand objects of each kind and an hour of churn; against
// foreign objects, bad input and statuses an older version wrote; when their objects are
// deleted at any moment, or migrated to a new storage version by a process killed
// midway; and with no more permission than their generated roles grant.
//
// Each scenario is one test against a full local control plane. `go test` runs a short
// pass; `go test -args -full`, which `make test-reliability` runs, pushes each scenario
// to the sizes the reliability issue names (100 objects of each kind, 50 crashes,
// reconciles counted over a minute) and ends with the report of ./report. What each
// scenario checks, and what it found, is in docs/reliability.md.
package reliability
