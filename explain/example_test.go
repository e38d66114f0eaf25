package explain_test

import (
	"os"

	"github.com/reconcilekit/reconcilekit/explain"
)

// A report of a tree that explain walked: Object reads it from a cluster; here it is made
// by hand.
func ExampleReport_WriteText() {
	pod := &explain.Node{Verdict: explain.Verdict{Kind: "Pod", Name: "web-7c9d-x2x", Status: "InProgress",
		State: "ImagePullBackOff", Detail: "image memcached:nope", HoldsBack: true,
		Events: []explain.Event{{Reason: "Failed", Message: "Error: ImagePullBackOff", Count: 3}}}}
	deployment := &explain.Node{Verdict: explain.Verdict{Kind: "Deployment", Name: "web", Status: "InProgress",
		State: "Progressing", Detail: "Available: 0/1", HoldsBack: true}, Children: []*explain.Node{pod}}
	service := &explain.Node{Verdict: explain.Verdict{Kind: "Service", Name: "web", Status: "Current", State: "Current"}}
	memcached := &explain.Node{Verdict: explain.Verdict{Kind: "Memcached", Name: "web", Status: "InProgress",
		State: "Reconciling", Detail: "RollingOut: 0 of 1 replicas available", HoldsBack: true},
		Children: []*explain.Node{deployment, service}}

	_ = explain.NewReport(memcached).WriteText(os.Stdout)
	// Output:
	// Pod web-7c9d-x2x: ImagePullBackOff (image memcached:nope) -> Deployment web: Progressing (Available: 0/1) -> Memcached web: Reconciling (RollingOut: 0 of 1 replicas available)
	//   Warning Failed on Pod web-7c9d-x2x: Error: ImagePullBackOff
}
