#!/usr/bin/env bash
# Regenerates what the example operators, and the minimal template of
# cmd/newoperator, derive from their markers: the
# deepcopy functions of each API, its CustomResourceDefinition, and the
# manager's ClusterRole; then the copies of the templates that cmd/newoperator
# embeds. The output is committed, so that CI can tell when it
# is stale by running this script and looking for a diff.
set -euo pipefail

cd "$(dirname "$0")/.."

for dir in examples/memcached examples/podset examples/at examples/keyval; do
	go tool -modfile=hack/tools/go.mod controller-gen \
		object \
		crd \
		rbac:roleName=manager-role \
		paths="{./$dir/api/...,./$dir/controller/...}" \
		output:crd:artifacts:config="$dir/config/crd/bases" \
		output:rbac:artifacts:config="$dir/config/rbac"
done

# The CronJob example embeds a whole Job template, pod spec included: with every
# field's description its CRD is 750 KB, too large for kubectl apply's annotation
# (256 KB), so its descriptions are left out, as the kubebuilder tutorial does.
go tool -modfile=hack/tools/go.mod controller-gen \
	object \
	crd:maxDescLen=0 \
	rbac:roleName=manager-role \
	paths="{./examples/cronjob/api/...,./examples/cronjob/controller/...}" \
	output:crd:artifacts:config=examples/cronjob/config/crd/bases \
	output:rbac:artifacts:config=examples/cronjob/config/rbac

# The Memcached example serves webhooks: their configurations, from the
# +kubebuilder:webhook markers of its API.
go tool -modfile=hack/tools/go.mod controller-gen \
	webhook \
	paths="{./examples/memcached/api/...}" \
	output:webhook:artifacts:config=examples/memcached/config/webhook

# The minimal template is a module of its own, so that it does not compile into the
# library's: controller-gen loads its packages from there.
(cd cmd/newoperator/minimal && go tool -modfile=../../../hack/tools/go.mod controller-gen \
	object \
	crd \
	rbac:roleName=manager-role \
	paths="{./api/...,./controller/...}" \
	output:crd:artifacts:config=config/crd/bases \
	output:rbac:artifacts:config=config/rbac)

# Last, as it copies what the steps above make: the templates that cmd/newoperator
# embeds, so that go run .../cmd/newoperator@VERSION needs no checkout.
go test -count=1 -run '^TestEmbeddedTemplatesAreTheCheckouts$' ./cmd/newoperator -args -update >/dev/null
