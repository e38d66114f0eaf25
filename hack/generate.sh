#!/usr/bin/env bash
# Regenerates what the example operators, and the minimal template of
# hack/newoperator, derive from their markers: the
# deepcopy functions of each API, its CustomResourceDefinition, and the
# manager's ClusterRole. The output is committed, so that CI can tell when it
# is stale by running this script and looking for a diff.
set -euo pipefail

cd "$(dirname "$0")/.."

for dir in examples/memcached examples/podset examples/at examples/keyval hack/newoperator/minimal; do
	go tool -modfile=hack/tools/go.mod controller-gen \
		object \
		crd \
		rbac:roleName=manager-role \
		paths="{./$dir/api/...,./$dir/controller/...}" \
		output:crd:artifacts:config="$dir/config/crd/bases" \
		output:rbac:artifacts:config="$dir/config/rbac"
done

# The Memcached example serves webhooks: their configurations, from the
# +kubebuilder:webhook markers of its API.
go tool -modfile=hack/tools/go.mod controller-gen \
	webhook \
	paths="{./examples/memcached/api/...}" \
	output:webhook:artifacts:config=examples/memcached/config/webhook
