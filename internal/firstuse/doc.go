// Package firstuse tests what a new user does first with reconcilekit, the way they do it:
// copy a template (the minimal one or an example operator) as the start of their own,
// also with go run .../cmd/newoperator@version and no checkout, install the library with
// go get, and deploy an example to a cluster. It has no code of
// its own, only tests.
package firstuse
