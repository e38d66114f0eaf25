#!/usr/bin/env bash
# Counts what a user's project gets by requiring the library alone: a new module, in a
# temporary directory, that requires github.com/reconcilekit/reconcilekit (replaced by
# this checkout) and imports conditions, ownership, reconcile and requeue; go mod tidy;
# then the edges of its go mod graph, the modules of its build list and the require lines
# of its go.mod. The README's Dependencies section quotes these figures.
#
#   hack/module-graph.sh [checkout]   the checkout to require; this one by default
set -euo pipefail

root=$(cd "${1:-$(dirname "$0")/..}" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"

cat >go.mod <<EOT
module example.com/operator

go 1.26.0

require github.com/reconcilekit/reconcilekit v0.0.0

replace github.com/reconcilekit/reconcilekit => $root
EOT
cat >main.go <<'EOT'
// Package main is an operator's project that requires the library alone.
package main

import (
	_ "github.com/reconcilekit/reconcilekit/conditions"
	_ "github.com/reconcilekit/reconcilekit/ownership"
	_ "github.com/reconcilekit/reconcilekit/reconcile"
	_ "github.com/reconcilekit/reconcilekit/requeue"
)

func main() {}
EOT
go mod tidy
go build ./...
go mod graph >graph
echo "go mod graph: $(wc -l <graph) edges, $(grep -c '^github.com/reconcilekit/reconcilekit@' graph) of them the library's requirements"
echo "go list -m all: $(go list -m all | wc -l) modules"
echo "go.mod: $(grep -cE '^(require )?[[:space:]]*[a-z0-9.-]+\.[a-z]+/[^ ]+ v' go.mod) require lines"
echo "modules compiled: $(go list -deps -f '{{with .Module}}{{.Path}}{{end}}' . | sort -u | wc -l)"
