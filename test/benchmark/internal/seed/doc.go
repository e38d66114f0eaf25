// Package seed holds the baselines of the benchmark: the Memcached, PodSet and At
// controllers written the way their seeds write them (kubebuilder's deploy-image
// Memcached, the PodSet operator tutorial, cnat from "Programming Kubernetes"), on the
// same API types as the library-built examples so that both run on identical inputs.
//
// They make the same API calls in the same order, write status the same way and requeue
// the same way, faults included: the Memcached controller writes status on every
// reconcile and re-reads the object from a cache that may be stale, the PodSet
// controller caches every pod of the cluster and compares an unsorted list, and the At
// controller returns a schedule parse error as an error. They are baselines to measure
// against, not code to copy.
package seed
