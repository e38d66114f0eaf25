package explore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/ownership"
)

// Masked are what the end states of two runs may differ in without a violation: what the
// API server allocates or stamps, and what is derived from the run's namespace, whose name
// each run has its own. docs/exploring.md lists them for the operator's author.
var Masked = []string{
	"metadata.uid, metadata.resourceVersion, metadata.creationTimestamp, metadata.managedFields, metadata.selfLink",
	"metadata.generation (status.observedGeneration and each condition's observedGeneration are compared as current or behind it)",
	"metadata.name of an object named by generateName (compared as the prefix, <generated>)",
	"metadata.deletionTimestamp (compared as set or not)",
	"metadata.ownerReferences[].uid, and any string that is the UID of an object of the state (compared as <uid>)",
	"the labels batch.kubernetes.io/controller-uid and controller-uid in metadata.labels, spec.selector.matchLabels and spec.template.metadata.labels (a Job's, its own UID)",
	"the annotations deployment.kubernetes.io/revision of a Deployment and deprecated.daemonset.template.generation of a DaemonSet (counts of template changes)",
	"a timestamp (RFC 3339) anywhere in metadata or status (compared as <time>)",
	"the annotations " + ownership.IntentAnnotation + " and " + ownership.ConfigHashAnnotation + " (hashes that cover the namespace)",
	"status.conditions[].lastTransitionTime",
	"spec.clusterIP and spec.clusterIPs of a Service (allocated)",
	"spec.nodeName of a Pod (the scheduler's choice of node, on a simulated cluster; compared as set or not)",
	"the status of every object of a kind the operator does not reconcile (its children's status is their controllers')",
	"the run's namespace, wherever a string names it (compared as {namespace})",
}

// state is what a namespace holds of the kinds explored, normalised: by "Kind name".
type state map[string]map[string]any

// objectsOf lists the objects of the kinds in namespace, and those of cluster-scoped kinds
// labelled with its run (RunLabel), unnormalised, by "Kind name" (keyOf).
func objectsOf(ctx context.Context, c client.Client, namespace string, kinds []schema.GroupVersionKind) (map[string]*unstructured.Unstructured, error) {
	out := map[string]*unstructured.Unstructured{}
	for _, gvk := range kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		namespaced, err := c.IsObjectNamespaced(list)
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvk.Kind, err)
		}
		in := []client.ListOption{client.InNamespace(namespace)}
		if !namespaced {
			in = []client.ListOption{client.MatchingLabels{RunLabel: namespace}}
		}
		if err := c.List(ctx, list, in...); err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvk.Kind, err)
		}
		for i := range list.Items {
			o := &list.Items[i]
			out[keyOf(gvk.Kind, o.GetName(), namespace)] = o
		}
	}
	return out, nil
}

// keyOf is the key of the object of kind named name in the run of namespace: "Kind name",
// with Namespace for the namespace in the name (a cluster-scoped object's, or a child's
// named after it), so that the keys of two runs compare.
func keyOf(kind, name, namespace string) string {
	return kind + " " + strings.ReplaceAll(name, namespace, Namespace)
}

// normalise makes a state of objects, masking what Masked lists. The status of an object
// of a kind that ours does not hold is another controller's (a Deployment's rollout), not
// the operator's, and is left out.
func normalise(objs map[string]*unstructured.Unstructured, namespace string, ours map[string]bool) state {
	uids := map[string]bool{}
	for _, o := range objs {
		uids[string(o.GetUID())] = true
	}
	s := state{}
	// Objects named by generateName are told apart by what they hold, not by the order
	// of their random names: the same children make the same state in every run.
	generated := map[string][]map[string]any{}
	for _, key := range mapsKeys(objs) {
		o := objs[key]
		n := normaliseObject(o.Object, namespace, uids)
		if !ours[o.GetKind()] {
			delete(n, "status")
		}
		if g := o.GetGenerateName(); g != "" {
			k := o.GetKind() + " " + g + "<generated>"
			generated[k] = append(generated[k], n)
			continue
		}
		s[keyOf(o.GetKind(), o.GetName(), namespace)] = n
	}
	for k, ns := range generated {
		slices.SortFunc(ns, func(a, b map[string]any) int {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			return strings.Compare(string(ja), string(jb))
		})
		for i, n := range ns {
			key := k
			if i > 0 {
				key = fmt.Sprintf("%s (%d)", k, i+1)
			}
			s[key] = n
		}
	}
	return s
}

func mapsKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func normaliseObject(in map[string]any, namespace string, uids map[string]bool) map[string]any {
	raw, _ := json.Marshal(in)
	var obj map[string]any
	_ = json.Unmarshal([]byte(strings.ReplaceAll(string(raw), namespace, Namespace)), &obj)
	replaceStrings(obj, func(s string) (string, bool) {
		if uids[s] {
			return "<uid>", true
		}
		return "", false
	})
	for _, part := range []string{"metadata", "status"} {
		replaceStrings(obj[part], func(s string) (string, bool) {
			if _, err := time.Parse(time.RFC3339, s); err == nil {
				return "<time>", true
			}
			return "", false
		})
	}
	md, _ := obj["metadata"].(map[string]any)
	generation, _ := md["generation"].(float64)
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink"} {
		delete(md, f)
	}
	if g, _ := md["generateName"].(string); g != "" {
		md["name"] = g + "<generated>"
	}
	if _, ok := md["deletionTimestamp"]; ok {
		md["deletionTimestamp"] = "<set>"
	}
	if a, ok := md["annotations"].(map[string]any); ok {
		for _, k := range []string{ownership.IntentAnnotation, ownership.ConfigHashAnnotation} {
			if _, ok := a[k]; ok {
				a[k] = "<masked>"
			}
		}
	}
	if refs, ok := md["ownerReferences"].([]any); ok {
		for _, r := range refs {
			if m, ok := r.(map[string]any); ok {
				delete(m, "uid")
			}
		}
	}
	normaliseSpec(obj)
	if status, ok := obj["status"].(map[string]any); ok {
		markGeneration(status, generation)
		if conds, ok := status["conditions"].([]any); ok {
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok {
					delete(m, "lastTransitionTime")
					markGeneration(m, generation)
				}
			}
		}
	}
	return obj
}

// normaliseSpec masks, in the normalised obj's spec, what differs between two runs alike:
// the config hash of a workload's template, a pod's node, a Service's allocated IPs.
func normaliseSpec(obj map[string]any) {
	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		return
	}
	// The template of a workload carries the config hash too.
	if tmpl, ok := spec["template"].(map[string]any); ok {
		if tmd, ok := tmpl["metadata"].(map[string]any); ok {
			if a, ok := tmd["annotations"].(map[string]any); ok {
				if _, ok := a[ownership.ConfigHashAnnotation]; ok {
					a[ownership.ConfigHashAnnotation] = "<masked>"
				}
			}
		}
	}
	// The node a pod runs on is the scheduler's choice among equal nodes: two runs
	// of one workload on a simulated cluster place the same pod apart.
	if obj["kind"] == "Pod" {
		if n, ok := spec["nodeName"].(string); ok && n != "" {
			spec["nodeName"] = "<scheduled>"
		}
	}
	if obj["kind"] == "Service" {
		for _, f := range []string{"clusterIP", "clusterIPs"} {
			if v, ok := spec[f]; ok && v != "None" && !isNoneList(v) {
				spec[f] = "<allocated>"
			}
		}
	}
}

// replaceStrings replaces, in place, each string of v that with says to.
func replaceStrings(v any, with func(string) (string, bool)) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if s, ok := c.(string); ok {
				if r, ok := with(s); ok {
					x[k] = r
				}
				continue
			}
			replaceStrings(c, with)
		}
	case []any:
		for i, c := range x {
			if s, ok := c.(string); ok {
				if r, ok := with(s); ok {
					x[i] = r
				}
				continue
			}
			replaceStrings(c, with)
		}
	}
}

func isNoneList(v any) bool {
	l, ok := v.([]any)
	return ok && len(l) == 1 && l[0] == "None"
}

// markGeneration replaces m's observedGeneration by whether it is the object's generation.
func markGeneration(m map[string]any, generation float64) {
	og, ok := m["observedGeneration"].(float64)
	if !ok {
		return
	}
	if og == generation {
		m["observedGeneration"] = "<current>"
	} else {
		m["observedGeneration"] = fmt.Sprintf("<%g behind>", generation-og)
	}
}

// controllerOf returns the kind and name of obj's controller, if it has one.
func controllerOf(obj map[string]any) (kind, name string, ok bool) {
	md, _ := obj["metadata"].(map[string]any)
	refs, _ := md["ownerReferences"].([]any)
	for _, r := range refs {
		m, _ := r.(map[string]any)
		if c, _ := m["controller"].(bool); c {
			kind, _ = m["kind"].(string)
			name, _ = m["name"].(string)
			return kind, name, true
		}
	}
	return "", "", false
}

// ownerUIDs returns the uids of obj's owners.
func ownerUIDs(obj map[string]any) []string {
	md, _ := obj["metadata"].(map[string]any)
	refs, _ := md["ownerReferences"].([]any)
	var uids []string
	for _, r := range refs {
		m, _ := r.(map[string]any)
		if u, _ := m["uid"].(string); u != "" {
			uids = append(uids, u)
		}
	}
	return uids
}
