package rehearsal

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestTheReportWordsWhatEachBuildDidGroupedByWhatItDid(t *testing.T) {
	restart := func(name string) Write {
		return Write{Verb: Restarts, Kind: "Deployment", Namespace: "shop", Name: name,
			Changes: []Change{"pod template annotation example.com/x added"}}
	}
	sizeDefaulted := func(name string) Write {
		return Write{Verb: Rewrites, Kind: "Memcached", Namespace: "shop", Name: name, Changes: []Change{"spec.size added"}}
	}
	for _, tc := range []struct {
		name   string
		report Report
		want   string
	}{{
		name:   "nothing written",
		report: Report{},
		want: `the old build, restarted, writes nothing
the new build writes nothing
`,
	}, {
		name: "restarts named three at most, and a default",
		report: Report{Upgrade: []Write{
			restart("a"), restart("b"), restart("c"), restart("d"), restart("e"),
			sizeDefaulted("web"), sizeDefaulted("api"),
		}},
		want: `the old build, restarted, writes nothing
the new build writes:
  restarts 5 Deployments: pod template annotation example.com/x added (shop/a, shop/b, shop/c and 2 more)
  rewrites 2 Memcacheds: spec.size added (shop/api, shop/web)
`,
	}, {
		name: "an object's writes of a kind are told once, their changes together",
		report: Report{Upgrade: []Write{
			{Verb: Rewrites, Kind: "Deployment", Namespace: "shop", Name: "a", Changes: []Change{"spec.replicas changed"}},
			{Verb: Restarts, Kind: "Deployment", Namespace: "shop", Name: "a", Changes: []Change{"spec.template.spec.containers[web].image changed"}},
			{Verb: Rewrites, Kind: "Deployment", Namespace: "shop", Name: "a"}, // a write from a stale cache
			{Verb: UpdatesStatus, Kind: "Memcached", Namespace: "shop", Name: "a", Changes: []Change{"status.conditions[Progressing].status changed"}},
			{Verb: UpdatesStatus, Kind: "Memcached", Namespace: "shop", Name: "a", Changes: []Change{"status.conditions[Progressing].status changed"}},
			{Verb: Creates, Kind: "Secret", Namespace: "system", Name: "certs"},
			{Verb: Rewrites, Kind: "ConfigMap", Namespace: "shop", Name: "settings"},
		}},
		want: `the old build, restarted, writes nothing
the new build writes:
  rewrites 1 ConfigMap without a change (shop/settings)
  restarts 1 Deployment: spec.replicas changed, spec.template.spec.containers[web].image changed (shop/a)
  updates the status of 1 Memcached: status.conditions[Progressing].status changed (shop/a)
  creates 1 Secret (system/certs)
`,
	}, {
		name: "what the old build writes on a restart is the baseline",
		report: Report{
			Control: []Write{{Verb: UpdatesStatus, Kind: "Memcached", Namespace: "shop", Name: "web", Changes: []Change{"status.observedAt changed"}}},
			Upgrade: []Write{
				{Verb: UpdatesStatus, Kind: "Memcached", Namespace: "shop", Name: "web", Changes: []Change{"status.observedAt changed"}},
				sizeDefaulted("web"),
			},
		},
		want: `the old build, restarted, writes:
  updates the status of 1 Memcached: status.observedAt changed (shop/web)
the new build writes what the old build writes, and:
  rewrites 1 Memcached: spec.size added (shop/web)
`,
	}, {
		name: "an upgrade that writes only what a restart writes",
		report: Report{
			Control: []Write{{Verb: Deletes, Kind: "Pod", Namespace: "shop", Name: "stale"}},
			Upgrade: []Write{{Verb: Deletes, Kind: "Pod", Namespace: "shop", Name: "stale"}},
		},
		want: `the old build, restarted, writes:
  deletes 1 Pod (shop/stale)
the new build writes what the old build writes, and nothing more
`,
	}, {
		name: "plurals",
		report: Report{Upgrade: []Write{
			{Verb: Creates, Kind: "Ingress", Namespace: "a", Name: "x"}, {Verb: Creates, Kind: "Ingress", Namespace: "a", Name: "y"},
			{Verb: Creates, Kind: "NetworkPolicy", Namespace: "a", Name: "x"}, {Verb: Creates, Kind: "NetworkPolicy", Namespace: "a", Name: "y"},
			{Verb: Creates, Kind: "Gateway", Name: "x"}, {Verb: Creates, Kind: "Gateway", Name: "y"},
		}},
		want: `the old build, restarted, writes nothing
the new build writes:
  creates 2 Gateways (x, y)
  creates 2 Ingresses (a/x, a/y)
  creates 2 NetworkPolicies (a/x, a/y)
`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.report.String(); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestADiffNamesEachFieldAWriteChanged(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after string
		status        bool
		want          []Change
	}{{
		name:   "what the API server sets is no change",
		before: `{"metadata":{"name":"a","resourceVersion":"1","generation":1,"managedFields":[{}],"annotations":{"reconcilekit.io/intent":"x"}}}`,
		after:  `{"metadata":{"name":"a","resourceVersion":"2","generation":2,"managedFields":[{},{}],"annotations":{"reconcilekit.io/intent":"y","deployment.kubernetes.io/revision":"2"}}}`,
	}, {
		name:   "pod template annotations and labels by key",
		before: `{"spec":{"template":{"metadata":{"labels":{"app":"web"}}}}}`,
		after:  `{"spec":{"template":{"metadata":{"labels":{"app":"web","tier":"cache"},"annotations":{"example.com/x":"1"}}}}}`,
		want:   []Change{"pod template annotation example.com/x added", "pod template label tier added"},
	}, {
		name:   "named items by name, other lists whole",
		before: `{"spec":{"containers":[{"name":"a","args":["-x"]},{"name":"b"}],"tolerations":[{"key":"k"}]}}`,
		after:  `{"spec":{"containers":[{"name":"a","args":["-y"]},{"name":"c"}],"tolerations":[{"key":"l"}]}}`,
		want: []Change{
			"spec.containers[a].args changed", "spec.containers[b] removed", "spec.containers[c] added",
			"spec.tolerations changed",
		},
	}, {
		name:   "conditions by type",
		before: `{"status":{"conditions":[{"type":"Ready","status":"False"}]},"spec":{"size":1}}`,
		after:  `{"status":{"conditions":[{"type":"Ready","status":"True"}]},"spec":{"size":2}}`,
		status: true,
		want:   []Change{"status.conditions[Ready].status changed"},
	}, {
		name:   "a write of the object ignores its status",
		before: `{"status":{"replicas":1},"spec":{}}`,
		after:  `{"status":{"replicas":2},"spec":{"size":2}}`,
		want:   []Change{"spec.size added"},
	}, {
		name:   "annotations with dots in brackets",
		before: `{"metadata":{"annotations":{"example.com/a":"1"}}}`,
		after:  `{"metadata":{}}`,
		want:   []Change{"metadata.annotations[example.com/a] removed"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after map[string]any
			if err := json.Unmarshal([]byte(tc.before), &before); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.after), &after); err != nil {
				t.Fatal(err)
			}
			if got := diff(before, after, tc.status); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
