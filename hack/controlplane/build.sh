#!/usr/bin/env bash
# Builds the local control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok) from source through the Go module proxy and caches it outside the
# checkout, keyed by the pinned versions, so every clone on this machine reuses it.
#
# The pins live in the go.mod files next to this script, one nested module per upstream
# project (kubernetes and etcd require different etcd versions, so they cannot share one).
#
# Usage: build.sh            build what is missing, then print the directory
#        build.sh --dir      print the directory only (it may not exist yet)
#        build.sh kubectl    build kubectl of the same Kubernetes version into the directory
#                            if missing, then print its path
#
# An existing KUBEBUILDER_ASSETS that already holds every binary is honoured as it is, and
# so is a kubectl in it.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
binaries=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)

version_of() { (cd "$here/$1" && go list -m -f '{{.Version}}' "$2"); }
k8s=$(version_of kubernetes k8s.io/kubernetes)
etcd=$(version_of etcd go.etcd.io/etcd/server/v3)
kwok=$(version_of kwok sigs.k8s.io/kwok)

complete() {
	local b
	for b in "${binaries[@]}"; do [ -x "$1/$b" ] || return 1; done
}

target=${1:-}
case "$target" in
"" | --dir | kubectl) ;;
*)
	echo "usage: $0 [--dir | kubectl]" >&2
	exit 2
	;;
esac

if [ "$target" = kubectl ]; then
	if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -x "$KUBEBUILDER_ASSETS/kubectl" ]; then
		echo "$KUBEBUILDER_ASSETS/kubectl"
		exit 0
	fi
elif [ -n "${KUBEBUILDER_ASSETS:-}" ] && complete "$KUBEBUILDER_ASSETS"; then
	echo "$KUBEBUILDER_ASSETS"
	exit 0
fi

cache=${XDG_CACHE_HOME:-$HOME/.cache}
dir="$cache/reconcilekit/controlplane/kubernetes-$k8s-etcd-$etcd-kwok-$kwok"
if [ "$target" = --dir ]; then
	echo "$dir"
	exit 0
fi
mkdir -p "$dir"

# One build at a time per directory: parallel make targets and test runs wait here.
exec 9>"$dir/.lock"
flock 9

if [ "$target" != kubectl ] && complete "$dir"; then
	echo "$dir"
	exit 0
fi

start=$SECONDS
progress() { echo "controlplane: $* ($((SECONDS - start))s)" >&2; }

# build MODULE LDFLAGS NAME PACKAGE: builds one binary unless the cache has it, with a
# heartbeat so that a quiet 7-minute compile is not mistaken for a hang. Binaries built
# one after another share the Go build cache, so only linking is repeated.
build() {
	local module=$1 ldflags=$2 name=$3 pkg=$4
	[ -x "$dir/$name" ] && return 0
	progress "building $name (the first build takes minutes)"
	( while sleep 30; do progress "still building $name"; done ) &
	local ticker=$!
	local ok=0
	(cd "$here/$module" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ldflags" -o "$dir/.$name.tmp" "$pkg") || ok=$?
	kill "$ticker"
	if [ "$ok" != 0 ]; then
		rm -f "$dir/.$name.tmp"
		echo "controlplane: building $name failed (the go build output above says why)" >&2
		exit 1
	fi
	mv "$dir/.$name.tmp" "$dir/$name"
	progress "built $name"
}

minor=${k8s#v1.}
minor=${minor%%.*}
version_flags="-X k8s.io/component-base/version.gitVersion=$k8s -X k8s.io/component-base/version.gitMajor=1"
version_flags+=" -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"

if [ "$target" = kubectl ]; then
	# kubectl reports component-base's version and sends client-go's in its user agent;
	# Kubernetes' own build stamps both.
	client_flags="-X k8s.io/client-go/pkg/version.gitVersion=$k8s -X k8s.io/client-go/pkg/version.gitMajor=1"
	client_flags+=" -X k8s.io/client-go/pkg/version.gitMinor=$minor -X k8s.io/client-go/pkg/version.gitTreeState=clean"
	build kubernetes "$version_flags $client_flags" kubectl k8s.io/kubernetes/cmd/kubectl
	echo "$dir/kubectl"
	exit 0
fi

build etcd "" etcd go.etcd.io/etcd/server/v3
for b in kube-apiserver kube-controller-manager kube-scheduler; do
	build kubernetes "$version_flags" "$b" "k8s.io/kubernetes/cmd/$b"
done
build kwok "" kwok sigs.k8s.io/kwok/cmd/kwok

complete "$dir"
echo "$dir"
