#!/usr/bin/env bash
# Regenerates what the example operators derive from their markers: the
# deepcopy functions of each API, its CustomResourceDefinition, and the
# manager's ClusterRole. The output is committed, so that CI can tell when it
# is stale by running this script and looking for a diff.
set -euo pipefail

cd "$(dirname "$0")/.."

for example in memcached podset at keyval; do
	dir=examples/$example
	go tool -modfile=hack/tools/go.mod controller-gen \
		object \
		crd \
		rbac:roleName=manager-role \
		paths="{./$dir/api/...,./$dir/controller/...}" \
		output:crd:artifacts:config="$dir/config/crd/bases" \
		output:rbac:artifacts:config="$dir/config/rbac"
done
