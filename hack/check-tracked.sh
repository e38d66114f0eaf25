#!/usr/bin/env bash
# Fails when the repository tracks build output: an executable (ELF, Mach-O or PE by its
# first bytes), any other file git reads as binary, or a file over 1 MB, unless the file is
# declared data in hack/check-tracked.allow. An executable cannot be declared data: it is
# built, never committed.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

allow=hack/check-tracked.allow
limit=$((1024 * 1024))

patterns=()
while IFS= read -r line; do
	line=${line%%#*}
	line=${line//[[:space:]]/}
	[[ -n $line ]] && patterns+=("$line")
done <"$allow"

declared() {
	local p
	for p in "${patterns[@]+"${patterns[@]}"}"; do
		# shellcheck disable=SC2053 # the pattern is a glob on purpose
		[[ $1 == $p ]] && return 0
	done
	return 1
}

# What git's own detection calls binary (a NUL byte in the first 8000), as it would show
# in a diff against the empty tree.
declare -A binary=()
empty=$(git hash-object -t tree /dev/null)
while IFS=$'\t' read -r added _ path; do
	[[ $added == - ]] && binary[$path]=1
done < <(git diff --cached --numstat --no-renames "$empty")

bad=0
executable() {
	case $(LC_ALL=C od -An -N4 -tx1 "$1" | tr -d ' \n') in
	7f454c46) echo "an ELF executable" ;;
	feedface | feedfacf | cefaedfe | cffaedfe | cafebabe) echo "a Mach-O executable" ;;
	4d5a*) echo "a PE executable" ;;
	esac
}
# An executable has NUL bytes in its header, so git calls it binary: only those are read.
for f in "${!binary[@]}"; do
	[[ -f $f && ! -L $f ]] || continue
	kind=$(executable "$f")
	if [[ -n $kind ]]; then
		echo "$f: $kind is tracked; build output never is: git rm --cached '$f' and ignore it" >&2
		bad=1
	elif ! declared "$f"; then
		echo "$f: a binary file is tracked; remove it, or declare it data in $allow" >&2
		bad=1
	fi
done
while read -r size f; do
	if ((size > limit)) && ! declared "$f"; then
		echo "$f: $size bytes, over 1 MB; remove it, or declare it data in $allow" >&2
		bad=1
	fi
done < <(git ls-files -z | xargs -0 stat -L -c '%s %n' 2>/dev/null)
exit $bad
