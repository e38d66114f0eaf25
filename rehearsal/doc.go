// Package rehearsal rehearses the upgrade of an operator before it runs: on a local
// cluster, the old build converges the objects of the cluster to upgrade, then the new
// build takes over, and the report lists every write the new build makes, per object, in
// the words a reviewer reads:
//
//	the old build, restarted, writes nothing
//	the new build writes:
//	  restarts 2 Deployments: spec.template.spec.containers[memcached].command changed (shop/cache, shop/sessions)
//
// An upgrade that changes a default in a pod template restarts every workload that
// template makes; one that defaults a new field rewrites every object. Both are better
// known before the upgrade than after. The control, the old build restarted the same way,
// says what a restart alone writes (nothing, for an operator that has converged), so that
// only the upgrade's own writes count against it.
//
// Each build is a command run as a process of its own, as it runs in a cluster, given a
// kubeconfig that reaches the local API server through a recorder, which reads each
// object before a write and compares it with the API server's answer. The cluster is
// package controlplane's: Deployments roll out and pods run, on simulated nodes. docs/upgrades.md tells the whole story; cmd/rehearse is the command.
package rehearsal
