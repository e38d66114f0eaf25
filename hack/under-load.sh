#!/usr/bin/env bash
# Runs a command (make test by default) beside a CPU load of twice the cores, as on a shared
# CI runner, and prints each Go package's result and time from its output. The load is busy
# loops of this script's own, bounded by LOAD_LIMIT (2h) and stopped when the command ends.
#
#	hack/under-load.sh [COMMAND...]
set -uo pipefail
(($#)) || set -- make test
workers=$((2 * $(nproc)))
limit=${LOAD_LIMIT:-2h}
pids=()
stop() { ((${#pids[@]})) && kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null; }
trap stop EXIT
for _ in $(seq "$workers"); do
	timeout "$limit" bash -c 'while :; do :; done' &
	pids+=($!)
done
echo "under-load: $workers busy loops for at most $limit beside: $*" >&2
log=$(mktemp)
start=$SECONDS
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
stop
pids=()
echo "under-load: each package, as go test reported it:"
grep -E '^(ok|FAIL|---|panic:)[[:space:]]' "$log" | grep -vE '^--- (PASS|SKIP)' || true
echo "under-load: exit $rc after $((SECONDS - start)) s; load average now $(cut -d' ' -f1-3 /proc/loadavg)"
rm -f "$log"
exit "$rc"
