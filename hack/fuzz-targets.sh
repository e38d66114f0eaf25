#!/usr/bin/env bash
# Prints every fuzz target of the Go module in the current directory, one "PACKAGE NAME" a
# line (./conditions FuzzSet), read from the code: a func Fuzz... in a _test.go file of one
# of the module's packages. Nested modules are not the module's packages, so they are left
# out. This is the one list of fuzz targets: make fuzz, make test-reliability and the check
# of docs/reliability.md (internal/docs) all read it.
set -euo pipefail
go list -f '{{.Dir}}' ./... | while read -r dir; do
	rel=".${dir#"$PWD"}"
	for file in "$dir"/*_test.go; do
		[[ -e $file ]] || continue
		sed -nE 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/p' "$file" | while read -r name; do
			echo "$rel $name"
		done
	done
done | sort
