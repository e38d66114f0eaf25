package explain

import (
	"fmt"
	"io"
	"strings"
)

// Node is an object of the tree explain walks: its verdict, and the objects it controls.
type Node struct {
	Verdict
	Children []*Node `json:"children,omitempty"`
}

// Report is what explain found of one object. Encoded as JSON it is the output of
// `kubectl reconcilekit explain -o json`, whose shape is this type's:
//
//	{"object": {<verdict>, "children": [{<verdict>, "children": [...]}, ...]},
//	 "chains": [[<verdict of the leaf>, ..., <verdict of the object>], ...],
//	 "unlisted": ["<resource>.<group>", ...]}
//
// where a verdict has the fields of Verdict: apiVersion, kind, namespace, name, status,
// state, detail, holdsBack and events (reason, message, count, last).
type Report struct {
	// Object is the object explained, with every object it controls under it.
	Object *Node `json:"object"`

	// Chains are what holds the object back, one chain for each branch that does: from
	// the deepest object that holds back, whose children do not, up to the object
	// itself. None when the object is Current and not paused.
	Chains [][]Verdict `json:"chains"`

	// Unlisted are the resources whose objects could not be listed (the caller may not
	// list them, say): any child of those kinds is missing from the tree.
	Unlisted []string `json:"unlisted,omitempty"`
}

// NewReport makes the report of the tree under root: the chains that hold it back.
func NewReport(root *Node) *Report {
	r := &Report{Object: root, Chains: [][]Verdict{}}
	if root.HoldsBack {
		r.Chains = chains(root, nil, r.Chains)
	}
	return r
}

// chains appends to found the chains of the tree under n, whose ancestors are above
// (the object explained first): n ends a chain when none of its children holds back.
func chains(n *Node, above []Verdict, found [][]Verdict) [][]Verdict {
	above = append(above, n.Verdict)
	leaf := true
	for _, c := range n.Children {
		if c.HoldsBack || holdsBackBelow(c) {
			leaf = false
			found = chains(c, above, found)
		}
	}
	if !leaf {
		return found
	}
	chain := make([]Verdict, len(above))
	for i, v := range above {
		chain[len(above)-1-i] = v
	}
	return append(found, chain)
}

// holdsBackBelow is whether something under n holds back, though n itself may not: a
// Deployment that is Current while one of its pods failed, say.
func holdsBackBelow(n *Node) bool {
	for _, c := range n.Children {
		if c.HoldsBack || holdsBackBelow(c) {
			return true
		}
	}
	return false
}

// WriteText writes the report as `kubectl reconcilekit explain` prints it: one line for an
// object that is Current ("Memcached cache: Current"); otherwise one line per chain, leaf
// first, joined by " -> ", then the recent Warning events of the objects in the chains,
// each object's once, indented.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	if len(r.Chains) == 0 {
		b.WriteString(r.Object.Verdict.String() + "\n")
	}
	seen := map[string]bool{}
	var events []string
	for _, chain := range r.Chains {
		links := make([]string, len(chain))
		for i, v := range chain {
			links[i] = v.String()
			key := v.APIVersion + "/" + v.Kind + "/" + v.Namespace + "/" + v.Name
			if seen[key] {
				continue
			}
			seen[key] = true
			for _, e := range v.Events {
				events = append(events, fmt.Sprintf("  Warning %s on %s %s: %s\n", e.Reason, v.Kind, v.Name, e.Message))
			}
		}
		b.WriteString(strings.Join(links, " -> ") + "\n")
	}
	for _, e := range events {
		b.WriteString(e)
	}
	if len(r.Unlisted) > 0 {
		fmt.Fprintf(&b, "  (not listed, so not searched for children: %s)\n", strings.Join(r.Unlisted, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
