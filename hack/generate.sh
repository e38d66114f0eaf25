#!/usr/bin/env bash
# Regenerates what the example operators, and the minimal template of
# cmd/newoperator, derive from their markers: the
# deepcopy functions of each API, its CustomResourceDefinition, and the
# manager's ClusterRole; then the copies of the templates that cmd/newoperator
# embeds. The output is committed, so that CI can tell when it
# is stale by running this script and looking for a diff.
#
# controller-gen loads packages from the module of its working directory: the
# examples' from examples/ (their own module), the template's from its own.
set -euo pipefail

cd "$(dirname "$0")/.."
controller_gen=$(go tool -modfile=hack/tools/go.mod -n controller-gen)

# gen runs controller-gen in module directory mod for the operator in dir, relative to mod.
gen() {
	local mod=$1 dir=$2
	(cd "$mod" && "$controller_gen" \
		object \
		crd \
		rbac:roleName=manager-role \
		paths="{./$dir/api/...,./$dir/controller/...}" \
		output:crd:artifacts:config="$dir/config/crd/bases" \
		output:rbac:artifacts:config="$dir/config/rbac")
}

for dir in memcached podset at keyval; do
	gen examples "$dir"
done

# The CronJob example embeds a whole Job template, pod spec included: with every
# field's description its CRD is 750 KB, too large for kubectl apply's annotation
# (256 KB), so its descriptions are left out, as the kubebuilder tutorial does.
(cd examples && "$controller_gen" \
	object \
	crd:maxDescLen=0 \
	rbac:roleName=manager-role \
	paths="{./cronjob/api/...,./cronjob/controller/...}" \
	output:crd:artifacts:config=cronjob/config/crd/bases \
	output:rbac:artifacts:config=cronjob/config/rbac)

# The Memcached example serves webhooks: their configurations, from the
# +kubebuilder:webhook markers of its API.
(cd examples && "$controller_gen" \
	webhook \
	paths="{./memcached/api/...}" \
	output:webhook:artifacts:config=memcached/config/webhook)

# The minimal template, and its cluster-scoped variant (newoperator -scope Cluster), are
# modules of their own, so that they do not compile into the library's: controller-gen
# loads their packages from there.
for template in minimal minimal-cluster; do
	(cd cmd/newoperator/$template && "$controller_gen" \
		object \
		crd \
		rbac:roleName=manager-role \
		paths="{./api/...,./controller/...}" \
		output:crd:artifacts:config=config/crd/bases \
		output:rbac:artifacts:config=config/rbac)
done

# Last, as it copies what the steps above make: the templates that cmd/newoperator
# embeds, so that go run .../cmd/newoperator@VERSION needs no checkout.
go test -count=1 -run '^TestEmbeddedTemplatesAreTheCheckouts$' ./cmd/newoperator -args -update >/dev/null
