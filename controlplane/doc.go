// Package controlplane starts a local Kubernetes control plane in a program's own
// processes: etcd and kube-apiserver alone, or a full cluster with kube-controller-manager,
// kube-scheduler and kwok simulating nodes, so that Deployments roll out, pods are
// scheduled, run and complete, a claim of the default StorageClass binds to a volume, and
// the garbage collector deletes what an owner leaves behind. Every component runs
// unthrottled. It is the launcher under reconcilekit's test tools (reconciletest, which
// adds to it what a test needs), the upgrade rehearsal and `make cluster`, and it does not
// import package testing.
//
// Start starts one and returns when it is ready; Stop stops every process it started and
// removes its files. Should the program die first, however it dies, a watchdog process
// kills the components and removes the files. Config is an administrator's config,
// KubeConfig a kubeconfig for kubectl and programs run beside it, User a config of a user
// that RBAC alone empowers; RestartAPIServer, RestartEtcd and RestartNodes crash a
// component and start it again; CompactEtcd, RewriteStored and Stored reach etcd behind
// the API server.
//
// The binaries are not built here: Start finds them in the directory KUBEBUILDER_ASSETS
// names, as envtest does, or else in the newest complete directory that `make
// controlplane` of a reconcilekit checkout (hack/controlplane/build.sh) built, from
// source, into the user cache directory, and otherwise fails with an error that says so.
//
// On a simulated node, a pod runs as soon as it is scheduled. A pod that runs once
// (restartPolicy Never) and that no Job owns then succeeds with exit code 0, unless its
// annotations say otherwise (see ExitCodeAnnotation, MessageAnnotation and
// RunForAnnotation) or its first container's last command word or argument is "false"
// or "exit 1": then it fails with exit code 1, as a shell would, so that an operator
// which runs a user's command can be tested with a failing one. A pod with a container
// whose image's tag is BadImageTag ("memcached:nope") never runs: it stays Pending, that
// container waiting with reason ImagePullBackOff, with a Warning event Failed, as a
// kubelet reports an image it cannot pull.
package controlplane
