#!/usr/bin/env bash
# Reads the output of go test -json on standard input (several modules' in a row, as
# `make unit GOTESTFLAGS=-json` prints them; lines that are not JSON are ignored) and
# prints each package's time, slowest first, then the N slowest tests (10; subtests are
# counted in their test), for docs/testing.md's timing tables.
#
#	make unit GOTESTFLAGS=-json 2>&1 | hack/slowest.sh [N]
set -euo pipefail
n=${1:-10}
ended=$(mktemp)
trap 'rm -f "$ended"' EXIT
jq -cR 'fromjson? | select(type == "object" and .Elapsed != null and (.Action == "pass" or .Action == "fail" or .Action == "skip"))' >"$ended"
short='sub("^github.com/reconcilekit/reconcilekit/?"; "")'
echo "seconds	result	package"
jq -r "select(.Test == null) | \"\(.Elapsed)\t\(.Action)\t\(.Package | $short)\"" "$ended" | sort -rn
echo
echo "the $n slowest tests:"
echo "seconds	result	package	test"
jq -r "select(.Test != null and (.Test | contains(\"/\") | not)) | \"\(.Elapsed)\t\(.Action)\t\(.Package | $short)\t\(.Test)\"" "$ended" |
	sort -rn | head -n "$n"
