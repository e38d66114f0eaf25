# reconcilekit: every command a contributor or CI needs.
#
#   make test      every test, lint and generated-file check (builds the control plane once)
#   make unit-fast every test that needs no control plane, in minutes, without its binaries
#   make demo      the example operators on a local control plane
#   make cluster   the local control plane alone, for an operator of your own
#   make bench     operators built from the library against seed-style ones
#   make help      all targets

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
GO ?= go
TOOL := $(GO) tool -modfile=hack/tools/go.mod

# The control-plane binaries, built from source once and cached outside the checkout.
# build.sh --dir honours a KUBEBUILDER_ASSETS that already holds all five.
# EXPLORE_PARALLEL is how many perturbed runs of one exploration make test-explore makes
# at once, two explorations at a time (-test.parallel): each run mostly waits for its
# operator to settle, so every point of every example is explored within ten minutes.
EXPLORE_PARALLEL ?= 4
# EXPLORE_AT_ONCE is how many explorations (examples, corpus, mutants) make test-explore
# makes side by side.
EXPLORE_AT_ONCE ?= 4

export KUBEBUILDER_ASSETS := $(shell hack/controlplane/build.sh --dir)

.PHONY: help
help: ## Show the targets.
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

.PHONY: controlplane
controlplane: ## Build etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok if missing; print their directory.
	@hack/controlplane/build.sh

.PHONY: kubectl
kubectl: ## Build kubectl of the control plane's Kubernetes version if missing; print its path.
	@hack/controlplane/build.sh kubectl

.PHONY: test-kubectl
test-kubectl: controlplane kubectl ## Run `kubectl reconcilekit explain` through kubectl of the control plane's version (builds kubectl first).
	$(GO) test -tags kubectl -count=1 -run '^TestKubectlRunsThePlugin$$' ./cmd/kubectl-reconcilekit

.PHONY: generate
generate: ## Regenerate deepcopy functions, CRDs and RBAC of the examples and of newoperator's minimal templates, and newoperator's embedded templates.
	hack/generate.sh

.PHONY: verify-generated
verify-generated: generate ## Fail when generated files differ from what is committed.
	@git diff --exit-code -- examples cmd/newoperator/minimal cmd/newoperator/minimal-cluster cmd/newoperator/templates || { echo "generated files are stale: run 'make generate' and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- examples cmd/newoperator/minimal cmd/newoperator/minimal-cluster cmd/newoperator/templates)" || { git status --porcelain -- examples cmd/newoperator/minimal cmd/newoperator/minimal-cluster cmd/newoperator/templates; echo "untracked generated files: run 'make generate' and commit"; exit 1; }

# MODULES are the checkout's Go modules, each with its own go.mod, so that the library's
# go.mod requires only what the library imports: the library (.), the example operators,
# the test suites (adopt, benchmark, explain, explore, reliability, upgrade) and the
# benchmark's peer operators (Flux's and Cluster API's helpers) and newoperator's minimal
# template and its cluster-scoped variant. Each builds against the
# library of this checkout through a replace directive; lint and unit go through every one,
# in its own directory, with its own go.mod, as a user's build would (no go.work).
MODULES := . examples test test/benchmark/peers cmd/newoperator/minimal cmd/newoperator/minimal-cluster

# each runs its argument in every module's directory, naming the module, and fails after
# all have run if one failed.
each = failed=; for m in $(MODULES); do echo "== $$m"; (cd $$m && $(1)) || failed="$$failed $$m"; done; \
	test -z "$$failed" || { echo "failed in:$$failed"; exit 1; }

.PHONY: lint
lint: ## gofmt, go vet, staticcheck and a tidy go.mod, of every module.
	@out=$$(gofmt -l $$(git ls-files '*.go')); test -z "$$out" || { echo "gofmt would change: $$out"; exit 1; }
	@staticcheck=$$($(TOOL) -n staticcheck) && $(call each,$(GO) vet ./... && "$$staticcheck" ./... && \
		{ $(GO) mod tidy -diff || { echo "go.mod or go.sum is not tidy: run 'make tidy' and commit"; exit 1; }; })

.PHONY: tidy
tidy: ## go mod tidy in every module.
	@$(call each,$(GO) mod tidy)

.PHONY: module-graph
module-graph: ## Count the module graph of a new module that requires only the library (the figure of the README's Dependencies).
	@hack/module-graph.sh

.PHONY: docs
docs: ## Check the README and docs/: names resolve, Go blocks compile, every exported identifier has godoc (also run by unit).
	$(GO) test -count=1 ./internal/docs

# GOTESTFLAGS are added to go test by unit and unit-fast: -json, to time each package and
# test (make unit GOTESTFLAGS=-json 2>&1 | hack/slowest.sh), or -count=1.
GOTESTFLAGS ?=

.PHONY: unit-fast
unit-fast: ## Run the tests of every module that need no control plane and build no module (go test -short), without its binaries; the others say they skip.
	@$(call each,$(GO) test -short $(GOTESTFLAGS) ./...)

.PHONY: unit
unit: controlplane ## Run the tests of every module with the race detector and print coverage.
	@$(call each,$(GO) test -race -cover -timeout 25m $(GOTESTFLAGS) ./...)

.PHONY: test-adopt
test-adopt: controlplane ## Scaffold a kubebuilder v4 project, adopt one controller, run its tests and main; create api on every template (part of unit).
	cd test && $(GO) test -count=1 -v -timeout 20m ./adopt

.PHONY: fuzz
fuzz: ## Run every fuzz target of the library (hack/fuzz-targets.sh lists them from the code) for FUZZ_BRIEF (20000 inputs) beyond its committed corpus; fail if one fuzzed nothing.
	@hack/fuzz.sh $(FUZZ_BRIEF)

# A count, not a duration: Go 1.26's fuzzing coordinator can fail a duration's run with
# "context deadline exceeded" when a worker is busy as the time runs out on a loaded
# machine (go.dev/issue/75804, fixed in 1.27); a count has no deadline to race.
FUZZ_BRIEF ?= 20000x

.PHONY: check-tracked
check-tracked: ## Fail on a tracked executable, binary or file over 1 MB not declared data (hack/check-tracked.allow).
	@hack/check-tracked.sh

.PHONY: api-check
api-check: ## Fail on an incompatible API change since the release hack/release/ records that CHANGELOG.md does not list under Breaking (docs/releasing.md).
	@hack/api-check.sh

.PHONY: test
test: check-tracked lint api-check verify-generated unit fuzz ## Everything CI checks.

.PHONY: test-under-load
test-under-load: controlplane ## Run make test beside a CPU load of twice the cores (busy loops of its own, stopped at the end); print each package's result and time.
	@hack/under-load.sh $(MAKE) --no-print-directory test

.PHONY: demo
demo: controlplane ## Run the example operators on a local control plane until they converge (ARGS=--keep-running to stay).
	cd examples && $(GO) run ./demo $(ARGS)

.PHONY: cluster
cluster: controlplane ## Run the local control plane alone, with a restricted namespace, for an operator of your own, until interrupted (ARGS=-h for flags).
	@$(GO) build -o bin/cluster ./cmd/cluster
	@bin/cluster $(ARGS)

.PHONY: demo-sharding
demo-sharding: controlplane ## Run the At operator as three shards, separate processes, on a local control plane: split, SIGKILL, 3 -> 5 -> 2 (FULL=1 for 1000 Ats; ARGS=-logs to watch).
	cd test && $(GO) test -count=1 -v -timeout 60m -run '^TestSharded' ./reliability -args $(if $(FULL),-full) $(ARGS)

# Deploying an example to the cluster of the current kubeconfig (docs/deploy.md).
# EXAMPLES are the examples: the directories of examples/ with a kubebuilder PROJECT file,
# the one list that hack/generate.sh, newoperator and the tests read too.
EXAMPLES := $(patsubst examples/%/PROJECT,%,$(wildcard examples/*/PROJECT))
# EXAMPLE is one of EXAMPLES; IMG is the manager image the cluster pulls.
EXAMPLE ?= memcached
IMG ?= controller:latest
# CONFIG is the example's config directory deploy applies: default, or sharded.
CONFIG ?= default

.PHONY: manifests
manifests: ## Print the manifests of example EXAMPLE with manager image IMG (CONFIG=sharded: three shards, docs/sharding.md).
	@test -d examples/$(EXAMPLE)/config/default || { echo "EXAMPLE=$(EXAMPLE): want one of $(EXAMPLES)" >&2; exit 1; }
	@test -d examples/$(EXAMPLE)/config/$(CONFIG) || { echo "CONFIG=$(CONFIG): want default or sharded" >&2; exit 1; }
	@kustomize=$$($(TOOL) -n kustomize) && mkdir -p bin && overlay=$$(mktemp -d "$(CURDIR)/bin/overlay.XXXXXX") && \
		trap 'rm -rf "$$overlay"' EXIT && cd "$$overlay" && \
		"$$kustomize" create --resources ../../examples/$(EXAMPLE)/config/$(CONFIG) && \
		"$$kustomize" edit set image controller=$(IMG) && \
		"$$kustomize" build .

.PHONY: install
install: need-kubectl ## Install the CRD of example EXAMPLE in the cluster.
	$(TOOL) kustomize build examples/$(EXAMPLE)/config/crd | kubectl apply --server-side -f -

.PHONY: run
run: ## Run the manager of example EXAMPLE here, against the cluster (after make install).
	cd examples && $(GO) run ./$(EXAMPLE)/cmd

.PHONY: deploy
deploy: need-kubectl ## Deploy example EXAMPLE to the cluster: CRD, RBAC, namespace and the manager running IMG.
	$(MAKE) --no-print-directory -s manifests | kubectl apply --server-side -f -

.PHONY: undeploy
undeploy: need-kubectl ## Delete what deploy created, CRD and custom resources included.
	$(MAKE) --no-print-directory -s manifests | kubectl delete --ignore-not-found -f -

.PHONY: need-kubectl
need-kubectl:
	@command -v kubectl >/dev/null || { echo "kubectl is not installed; 'make manifests' prints what to apply" >&2; exit 1; }

.PHONY: bench
bench: controlplane ## Compare library-built operators with seed-style, Flux-style and Cluster-API-style ones and the ideal pipeline (N=200 by default; N=10000 runs one round).
	cd test && $(GO) run ./benchmark $(if $(N),-n $(N))

.PHONY: test-benchmark-every
test-benchmark-every: controlplane ## Run the benchmark's smoke test on every implementation of every kind (39 clusters; make test runs the library on every kind and each other implementation on one).
	cd test && $(GO) test -count=1 -v -timeout 60m -run '^TestEveryImplementationConverges' ./benchmark -args -benchmark.every

# How many inputs each fuzz target of the reliability suite tries after its committed
# corpus (a count, for the reason FUZZ_BRIEF gives).
FUZZTIME ?= 100000x

.PHONY: test-explore
test-explore: controlplane ## Explore the examples and the corpus at every point, prove each mutant caught by its oracle; end with "explore: operators=N runs=N points=N mutants_caught=N/N false_alarms=0 unjudged=N seconds=N".
	cd test/explore && $(GO) test -count=1 -timeout 25m -run '^TestExploring' -args -test.parallel=$(EXPLORE_AT_ONCE) -explore.mutants -explore.corpus -explore.all -explore.parallel=$(EXPLORE_PARALLEL)

# EXPLORE_NODES is how many kwok nodes make test-explore-simulated's cluster simulates.
EXPLORE_NODES ?= 2

.PHONY: test-explore-simulated
test-explore-simulated: controlplane ## make test-explore on a simulated cluster (controller manager, scheduler, EXPLORE_NODES kwok nodes): what only a cluster shows, pods that run, Jobs that complete, the garbage collector.
	cd test/explore && $(GO) test -count=1 -timeout 45m -run '^TestExploring' -args -test.parallel=$(EXPLORE_AT_ONCE) -explore.mutants -explore.corpus -explore.all -explore.parallel=$(EXPLORE_PARALLEL) -explore.nodes=$(EXPLORE_NODES)

# EXPLORE_MATRIX_MUTANTS picks the mutants of make test-explore-matrix (a regular expression
# of their bugs); empty explores every one, which takes most of an hour on two cores.
EXPLORE_MATRIX_MUTANTS ?=

.PHONY: test-explore-matrix
test-explore-matrix: controlplane ## Explore every mutant with every class at every point; print the matrix and prove each class catches a mutant no other does.
	cd test/explore && $(GO) test -count=1 -timeout 90m -run '^TestMatrix' -args -explore.matrix -explore.matrix.mutants='$(EXPLORE_MATRIX_MUTANTS)' -explore.parallel=$(EXPLORE_PARALLEL)

.PHONY: test-reliability
test-reliability: controlplane ## Run the reliability scenarios at full size and every fuzz target for FUZZTIME; name each scenario, then end with "N scenarios, N passed, N failed".
	@cd test && $(GO) build -o ../bin/reliability-report ./reliability/report
	@{ (cd test && $(GO) test -race -json -timeout 90m ./reliability -args -full) || true; \
	   hack/fuzz.sh -json $(FUZZTIME) || true; } | bin/reliability-report

# How long `make soak` churns.
DURATION ?= 1h

.PHONY: soak
soak: controlplane ## Churn objects for DURATION (1h) and fail on a leak of heap or goroutines or a missed object.
	cd test && $(GO) test -count=1 -v -run '^TestContinuousChurnLeaksNothingAndMissesNothing$$' -timeout 24h ./reliability -args -soak=$(DURATION)
