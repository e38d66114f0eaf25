#!/usr/bin/env bash
# Fuzzes every fuzz target of the Go module in the current directory (hack/fuzz-targets.sh)
# for FUZZTIME each, after its committed corpus, and fails if one failed, if one fuzzed
# nothing ("no fuzz tests to fuzz": its name and the code disagree) or if there is none.
# With -json the output is go test's events, for the reliability report to count; it still
# exits 1 on a failure, which make test-reliability leaves to the report.
#
#	hack/fuzz.sh [-json] FUZZTIME
set -uo pipefail
json=
if [[ ${1:-} == -json ]]; then
	json=-json
	shift
fi
fuzztime=${1:?usage: hack/fuzz.sh [-json] FUZZTIME (a duration, or a count such as 20000x)}
targets=$("$(dirname "$0")/fuzz-targets.sh") || exit 1
if [[ -z $targets ]]; then
	echo "fuzz: no fuzz target in the module of $PWD" >&2
	exit 1
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
failed=()
while read -r pkg name; do
	go test $json -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" "$pkg" 2>&1 | tee "$out"
	if [[ ${PIPESTATUS[0]} != 0 ]]; then
		failed+=("$pkg $name")
	elif grep -q 'no fuzz tests to fuzz' "$out"; then
		echo "fuzz: $pkg $name fuzzed nothing" >&2
		failed+=("$pkg $name (fuzzed nothing)")
	fi
done <<<"$targets"
if ((${#failed[@]})); then
	printf 'fuzz: failed: %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz: $(wc -l <<<"$targets") targets fuzzed" >&2
