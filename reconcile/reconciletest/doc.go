// Package reconciletest runs operators against a real control plane, in tests and in
// demos.
//
// A fake client agrees with the API server until it matters: status subresources,
// defaulting, admission, RBAC, garbage collection. reconciletest starts the real thing,
// through package controlplane, and stops it when the test ends. StartAPIServer runs etcd
// and kube-apiserver; StartCluster adds kube-controller-manager, kube-scheduler and kwok
// simulating nodes, so that Deployments roll out, pods are scheduled, run and complete, a
// claim of the default StorageClass binds to a volume (a StatefulSet's claims too), and
// the garbage collector deletes what an owner leaves behind. A TestMain that shares one
// control plane among tests uses Start and Stop; a program that is no test uses package
// controlplane itself.
//
// Operator puts the pieces together for the tests of one operator: its Main is the whole
// TestMain, and each test's Env runs the operator in a namespace of its own, as its
// generated role alone empowers it, counting its requests.
//
// The pieces: Namespace gives each test a namespace of its own;
// ConfigFor and StartManager run an operator as a user that its ClusterRole alone
// empowers; a Counter counts the requests it makes; Faults makes chosen requests fail;
// Intercept hands each request to a hook of the test's own, which may answer it;
// ExpectNoWrites proves that reconciling a converged object writes nothing; a Clock
// moves only when the test moves it; Env.RunServingMetrics and an Endpoint read the
// operator's metrics over HTTP as Prometheus would; MutatingWebhook puts a real mutating
// admission webhook, served by the test's process, in the API server's way;
// ServeWebhooks makes an operator's own declared webhooks (defaulting, validating,
// conversion) serve the API server, with the certificate the operator makes itself;
// Stored reads what etcd holds, each object in the version it was stored in.
//
// The binaries are built once per machine by `make controlplane` and found through
// KUBEBUILDER_ASSETS or in the user cache directory. Every process started is stopped by
// Stop and, should the program die first, killed with it. Under go test -short the tests
// that need them skip themselves, saying so (SkipShort), and the others run without them. Pods on simulated nodes behave as
// package controlplane says: ExitCodeAnnotation, MessageAnnotation, RunForAnnotation and
// BadImageTag decide how one ends.
package reconciletest
