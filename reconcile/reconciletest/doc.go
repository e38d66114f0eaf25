// Package reconciletest runs operators against a real control plane, in tests and in
// demos.
//
// A fake client agrees with the API server until it matters: status subresources,
// defaulting, admission, RBAC, garbage collection. reconciletest starts the real thing.
// StartAPIServer runs etcd and kube-apiserver through controller-runtime's envtest;
// StartCluster adds kube-controller-manager, kube-scheduler and kwok simulating nodes, so
// that Deployments roll out, pods are scheduled, run and complete, and the garbage
// collector deletes what an owner leaves behind. Programs use Start and Stop.
//
// Around the control plane, a Counter counts the requests an operator makes, Faults
// makes chosen requests fail, ExpectNoWrites proves that reconciling a converged object
// writes nothing, and ConfigFor runs a manager as a user its ClusterRole alone empowers.
//
// The binaries are built once per machine by `make controlplane` and found through
// KUBEBUILDER_ASSETS or in the user cache directory. Every process started is stopped by
// Stop and, should the program die first, killed with it.
//
// On a simulated node a pod runs as soon as it is scheduled, and a pod that runs once
// (restartPolicy Never) outside a Job then succeeds with exit code 0, or ends as its
// annotations say: ExitCodeAnnotation, MessageAnnotation and RunForAnnotation.
package reconciletest
