package explain_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reconcilekit/reconcilekit/explain"
)

// node is a node of a tree made by hand: kind, name, state and whether it holds back.
func node(kind, name, state string, holdsBack bool, children ...*explain.Node) *explain.Node {
	return &explain.Node{Verdict: explain.Verdict{Kind: kind, Name: name, State: state, HoldsBack: holdsBack}, Children: children}
}

func TestReportText(t *testing.T) {
	failedPull := node("Pod", "web-1", "ImagePullBackOff", true)
	failedPull.Detail = "image memcached:nope"
	failedPull.Events = []explain.Event{{Reason: "Failed", Message: "Error: ImagePullBackOff"}}
	stalled := func(children ...*explain.Node) *explain.Node {
		n := node("Memcached", "web", "Stalled", true, children...)
		n.Detail = "DeploymentNotOwned: taken"
		n.Events = []explain.Event{{Reason: "DeploymentNotOwned", Message: "taken"}}
		return n
	}

	for _, tc := range []struct {
		name string
		tree *explain.Node
		want []string
	}{{
		name: "a Current object is one line, whatever is under it",
		tree: node("Memcached", "cache", "Current", false, node("Deployment", "cache", "Current", false, node("Pod", "cache-1", "ImagePullBackOff", true))),
		want: []string{"Memcached cache: Current"},
	}, {
		name: "an object that holds back with nothing under it that does is a chain of itself, with its events",
		tree: stalled(node("Service", "web", "Current", false)),
		want: []string{
			"Memcached web: Stalled (DeploymentNotOwned: taken)",
			"  Warning DeploymentNotOwned on Memcached web: taken",
		},
	}, {
		name: "the chain runs from the deepest object that holds back up to the object, leaf first",
		tree: node("Memcached", "web", "Reconciling", true,
			node("Deployment", "web", "Progressing", true, node("ReplicaSet", "web-1", "Progressing", true, failedPull)),
			node("Service", "web", "Current", false)),
		want: []string{
			"Pod web-1: ImagePullBackOff (image memcached:nope) -> ReplicaSet web-1: Progressing -> Deployment web: Progressing -> Memcached web: Reconciling",
			"  Warning Failed on Pod web-1: Error: ImagePullBackOff",
		},
	}, {
		name: "each branch that holds back is a chain; the events of an object in two are printed once",
		tree: stalled(
			node("Deployment", "a", "Progressing", true, node("Pod", "a-1", "Unschedulable", true)),
			node("Deployment", "b", "Progressing", true),
			node("Deployment", "c", "Current", false)),
		want: []string{
			"Pod a-1: Unschedulable -> Deployment a: Progressing -> Memcached web: Stalled (DeploymentNotOwned: taken)",
			"Deployment b: Progressing -> Memcached web: Stalled (DeploymentNotOwned: taken)",
			"  Warning DeploymentNotOwned on Memcached web: taken",
		},
	}, {
		name: "a child being deleted leads the chain of an owner being deleted",
		tree: node("Keyval", "sessions", "Terminating", true,
			node("StatefulSet", "sessions", "Terminating", true, node("Pod", "sessions-0", "Current", false)),
			node("Service", "sessions", "Current", false)),
		want: []string{"StatefulSet sessions: Terminating -> Keyval sessions: Terminating"},
	}, {
		name: "a chain passes through an object that is Current to one under it that holds back",
		tree: node("At", "report", "Stalled", true, node("Job", "report", "Current", false, node("Pod", "report-1", "Error", true))),
		want: []string{"Pod report-1: Error -> Job report: Current -> At report: Stalled"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := explain.NewReport(tc.tree).WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")); diff != "" {
				t.Errorf("WriteText (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReportChains(t *testing.T) {
	pod := node("Pod", "web-1", "ImagePullBackOff", true)
	tree := node("Memcached", "web", "Reconciling", true, node("Deployment", "web", "Progressing", true, pod), node("Service", "web", "Current", false))
	var names [][]string
	for _, chain := range explain.NewReport(tree).Chains {
		var links []string
		for _, v := range chain {
			links = append(links, v.Kind)
		}
		names = append(names, links)
	}
	if diff := cmp.Diff([][]string{{"Pod", "Deployment", "Memcached"}}, names); diff != "" {
		t.Errorf("Chains (-want +got):\n%s", diff)
	}
	if chains := explain.NewReport(node("Memcached", "web", "Current", false)).Chains; chains == nil || len(chains) != 0 {
		t.Errorf("Chains of a Current object: %#v; want empty, and [] in JSON", chains)
	}
}
