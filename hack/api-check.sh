#!/usr/bin/env bash
# Fails when the library's API changed incompatibly since the recorded release and the change
# is not listed under a "### Breaking" heading of CHANGELOG.md (docs/releasing.md).
#
# The recorded release is the newest file of hack/release/ (named by its version, holding the
# full hash of the release commit). Each library package (not examples/, test/, cmd/, hack/ or
# internal/) of that commit is compared with the working tree's by golang.org/x/exp's apidiff,
# in whichever module of the repository holds it.
# Every incompatible change is named by the package's path in the module, a dot and the name
# apidiff gives: ownership.Deployment, reconcile/reconciletest.Cluster.Stop (a method's
# receiver without its star), or the package path alone when the package is gone. It is
# listed when that name, or the name of the type it belongs to, is a code span of a Breaking
# list in a section of CHANGELOG.md that the release's own CHANGELOG.md did not have:
# "## [Unreleased]", or the version being cut.
#
# APIDIFF is the apidiff binary to run; by default the one of hack/tools/go.mod.
set -euo pipefail

root=$(git rev-parse --show-toplevel)
cd "$root"
export GOWORK=off # the library is the root module alone, whatever a go.work holds

fail() {
	echo "api-check: $*" >&2
	exit 1
}

if [[ -z ${APIDIFF:-} ]]; then
	APIDIFF=$(go tool -modfile=hack/tools/go.mod -n apidiff) || fail "cannot build apidiff from hack/tools/go.mod"
fi

release=$(find hack/release -maxdepth 1 -type f -name 'v*' -printf '%f\n' 2>/dev/null | sort -V | tail -n 1)
[[ -n $release ]] || fail "no release recorded in hack/release/ (a file named by the version, holding its commit)"
commit=$(tr -d '[:space:]' <"hack/release/$release")
[[ $commit =~ ^[0-9a-f]{40}$ ]] || fail "hack/release/$release holds \"$commit\", not a full commit hash"
git cat-file -e "$commit^{commit}" 2>/dev/null ||
	fail "the commit of $release, $commit, is not in this clone (a shallow clone?): run 'git fetch --unshallow', or 'git fetch origin $commit'"

module=$(go list -m)

# notapi reports whether a path in the module is outside the library.
notapi() {
	case /$1/ in
	/examples/* | /test/* | /cmd/* | /hack/* | */internal/* | */testdata/*) return 0 ;;
	esac
	return 1
}

# library prints "path-in-module import-path module-directory" for each library package of
# the tree in the current directory, whichever of its modules holds it: a package that moves
# to a nested module keeps its import path and stays comparable.
library() {
	local mod dir paths path rel
	for mod in $(find . -name .git -prune -o -name go.mod -print | sort); do
		dir=$(dirname "$mod")
		dir=${dir#./}
		! notapi "$dir" || continue
		paths=$(cd "$dir" && go list -f '{{.ImportPath}}' ./...) || fail "go list ./... in $PWD/$dir"
		for path in $paths; do
			[[ $path == "$module" || $path == "$module"/* ]] || continue
			rel=${path#"$module"}
			rel=${rel#/}
			! notapi "$rel" || continue
			echo "${rel:-.} $path $dir"
		done
	done
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/old" "$tmp/x"
git archive "$commit" | tar -x -C "$tmp/old"

library >"$tmp/new.list"
(cd "$tmp/old" && library) >"$tmp/old.list"

# changes prints one "identifier: what changed" line per incompatible change.
changes() {
	local rel path dir newdir name what
	while read -r rel path dir; do
		newdir=$(awk -v p="$path" '$2 == p { print $3 }' "$tmp/new.list")
		if [[ -z $newdir ]]; then
			echo "$rel: package removed or moved"
			continue
		fi
		x=$tmp/x/${rel//\//_}
		(cd "$tmp/old/$dir" && "$APIDIFF" -w "$x.old" "$path") || fail "exporting $path at $release"
		(cd "$newdir" && "$APIDIFF" -w "$x.new" "$path") || fail "exporting $path in the working tree"
		"$APIDIFF" -incompatible "$x.old" "$x.new" | while IFS= read -r line; do
			line=${line#- }
			name=${line%%: *}
			what=${line#*: }
			name=${name//\(\*/}
			name=${name//[()]/}
			if [[ $name == "$module"/* ]]; then
				name=${name#"$module"/}
			else
				name=$rel.$name
			fi
			echo "$name: $what"
		done
	done <"$tmp/old.list"
}

changes >"$tmp/changes"

# The sections a Breaking list counts in: Unreleased, and every version the release's
# CHANGELOG.md did not have yet.
released=$(git show "$commit:CHANGELOG.md" 2>/dev/null | sed -n 's/^## \[\([^]]*\)\].*/\1/p' | grep -vx Unreleased || true)
listed=$(released=$released awk '
	BEGIN { n = split(ENVIRON["released"], r, "\n"); for (i = 1; i <= n; i++) old[r[i]] = 1 }
	/^## / {
		version = $0; sub(/^## \[?/, "", version); sub(/[] ].*/, "", version)
		counts = !(version in old); breaking = 0; next
	}
	/^### / { breaking = counts && $0 ~ /^### Breaking[[:space:]]*$/; next }
	breaking {
		line = $0
		while (match(line, /`[^`]+`/)) { print substr(line, RSTART + 1, RLENGTH - 2); line = substr(line, RSTART + RLENGTH) }
	}' CHANGELOG.md)

covered() {
	local name=$1
	while :; do
		grep -qxF -- "$name" <<<"$listed" && return 0
		[[ $name == *.*.* ]] || return 1
		name=${name%.*}
	done
}

total=0
unlisted=()
while IFS= read -r change; do
	total=$((total + 1))
	covered "${change%%: *}" || unlisted+=("$change")
done <"$tmp/changes"

packages=$(wc -l <"$tmp/old.list")
if ((${#unlisted[@]} > 0)); then
	{
		echo "api-check: ${#unlisted[@]} incompatible change(s) since $release ($commit) not listed as breaking:"
		printf '  %s\n' "${unlisted[@]}"
		echo "List each name, in backquotes, under \"### Breaking\" of \"## [Unreleased]\" in CHANGELOG.md, with what to write instead:"
		echo "  - \`${unlisted[0]%%: *}\`: ..."
		echo "(a type's name covers its fields and methods; docs/releasing.md)"
	} >&2
	exit 1
fi
echo "api-check: $packages library packages of $release ($commit) compared: $total incompatible change(s), all listed as breaking"
