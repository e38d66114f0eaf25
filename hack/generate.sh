#!/usr/bin/env bash
# Regenerates what the example operators, and the minimal template of
# cmd/newoperator, derive from their markers: the
# deepcopy functions of each API, its CustomResourceDefinition, and the
# manager's ClusterRole; before that, each template's Dockerfile and the
# cluster-scoped variant of the minimal template, from their one source; then
# the copies of the templates that cmd/newoperator embeds. The output is committed, so that CI can tell when it
# is stale by running this script and looking for a diff.
#
# controller-gen loads packages from the module of its working directory: the
# examples' from examples/ (their own module), the template's from its own.
set -euo pipefail

cd "$(dirname "$0")/.."
controller_gen=$(go tool -modfile=hack/tools/go.mod -n controller-gen)

# The examples are the directories of examples/ that hold a kubebuilder PROJECT file: the
# one list of them, which the Makefile, newoperator and the tests read too, so that a new
# example is its directory alone.
examples=$(cd examples && for p in */PROJECT; do dirname "$p"; done)

# Every template's manager image is built by one Dockerfile, hack/Dockerfile, copied into
# each, so that the copy a user makes holds it.
for dir in $examples; do
	cp hack/Dockerfile "examples/$dir/Dockerfile"
done
cp hack/Dockerfile cmd/newoperator/minimal/Dockerfile

# The cluster-scoped variant of the minimal template (newoperator -scope Cluster) is the
# minimal template but for the files that make its kind cluster-scoped, kept by hand in
# it; the rest is copied from the minimal template with its module path, its PROJECT and
# its manager's doc made the variant's, and its test objects left without a namespace.
cluster_own=(api/v1alpha1/widget_types.go controller/widget.go controller/widget_test.go controller/rbac.go controller/explore_test.go)
(
	cd cmd/newoperator/minimal-cluster
	for f in $(git ls-files --cached --others --exclude-standard .); do
		[[ " ${cluster_own[*]} " == *" $f "* ]] || rm -f "$f"
	done
	cd ../minimal
	for f in $(git ls-files --cached --others --exclude-standard .); do
		[[ " ${cluster_own[*]} " == *" $f "* ]] && continue
		mkdir -p "../minimal-cluster/$(dirname "$f")"
		sed -E 's#(cmd/newoperator/minimal)([/" ]|$)#\1-cluster\2#g' "$f" >"../minimal-cluster/$f"
	done
	cd ../minimal-cluster
	# perl -i, as sed -i differs between GNU and BSD.
	perl -ni -e 'print unless /^    namespaced: true$/' PROJECT
	perl -pi -e 's/ObjectMeta\{Name: name, Namespace: "default"\}/ObjectMeta{Name: name}/' api/v1alpha1/crd_test.go
	perl -0pi -e 's#which keeps a StatefulSet of servers for\n// every Widget object\.#which keeps a namespace and, in it, a\n// StatefulSet of servers for every Widget object.#' cmd/main.go
)

# gen_example runs controller-gen for the example in examples/dir: the deepcopy functions,
# CRD and role from its markers, and the configurations of its webhooks if it declares
# any.
gen_example() {
	local dir=$1 crd=crd
	# The CronJob example embeds a whole Job template, pod spec included: with every
	# field's description its CRD is 750 KB, too large for kubectl apply's annotation
	# (256 KB), so its descriptions are left out, as the kubebuilder tutorial does.
	[ "$dir" = cronjob ] && crd=crd:maxDescLen=0
	(cd examples && "$controller_gen" \
		object \
		"$crd" \
		rbac:roleName=manager-role \
		paths="{./$dir/api/...,./$dir/controller/...}" \
		output:crd:artifacts:config="$dir/config/crd/bases" \
		output:rbac:artifacts:config="$dir/config/rbac")
	if grep -rq '+kubebuilder:webhook' "examples/$dir/api"; then
		(cd examples && "$controller_gen" \
			webhook \
			paths="{./$dir/api/...}" \
			output:webhook:artifacts:config="$dir/config/webhook")
	fi
}

for dir in $examples; do
	gen_example "$dir"
done

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
