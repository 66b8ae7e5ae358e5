# tdb-operator Makefile. Every tool is pinned and built from Go modules into
# bin/ (git-ignored), so a fresh machine with Go needs nothing else.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

LOCALBIN ?= $(CURDIR)/bin
CONTROLLER_GEN_VERSION ?= v0.23.0
GOLANGCI_LINT_VERSION ?= v2.15.0
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)

# Unit tests are pure; integration tests run against a real kube-apiserver and
# etcd built by hack/build-k8s-binaries.sh.
UNIT_PKGS ?= ./...
INTEGRATION_PKGS ?= ./test/integration/...
GO_TEST_FLAGS ?= -count=1
FUZZTIME ?= 20s

.PHONY: all
all: build

##@ Help
.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

##@ Development
.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate the CRD and RBAC manifests.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd webhook paths="./api/..." paths="./controllers/..." paths="./internal/..." paths="./cmd/..." \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac output:webhook:artifacts:config=config/webhook

.PHONY: fmt
fmt: ## gofmt the tree.
	gofmt -l -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## go vet every package, integration ones included.
	go vet ./...
	go vet -tags integration ./test/...
	go vet -tags perf,integration ./test/perf/
	go vet -tags e2e ./test/e2e/

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint (pinned).
	$(GOLANGCI_LINT) run ./...

.PHONY: verify
verify: generate manifests ## Fail when generated files or formatting are stale.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "not gofmt-clean:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@git diff --exit-code -- api config || { echo "generated files are stale: run 'make generate manifests' and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- api config)" || { echo "untracked generated files:"; git status --porcelain -- api config; exit 1; }

##@ Test
.PHONY: test
test: verify vet test-unit test-integration test-e2e ## The whole suite: unit (with a short fuzz run), integration (envtest) and e2e (local kwok cluster).

.PHONY: test-unit
test-unit: ## Pure unit tests, plus a short run of the budget fuzzer.
	go test $(GO_TEST_FLAGS) $(UNIT_PKGS)
	go test -run='^$$' -fuzz=FuzzCompute -fuzztime=$(FUZZTIME) ./internal/budget/

.PHONY: test-integration
test-integration: k8s-binaries ## envtest suites against a real kube-apiserver and etcd.
	KUBEBUILDER_ASSETS="$$(hack/build-k8s-binaries.sh kube-apiserver etcd | tail -1)" \
		go test $(GO_TEST_FLAGS) -tags integration -timeout 30m $(INTEGRATION_PKGS) -ginkgo.v

.PHONY: test-e2e
test-e2e: cluster-binaries ## End-to-end suite on a fresh local kwok cluster (tdb-e2e, real control plane, concurrent kubectl drains, ports 19443/18080/18081); about 7 minutes.
	go test -tags e2e -count=1 -timeout 40m ./test/e2e/ -ginkgo.v

.PHONY: bench
bench: ## Benchmarks of the budget engine.
	go test -run='^$$' -bench=. -benchmem ./internal/budget/

.PHONY: k8s-binaries
k8s-binaries: ## Build pinned kube-apiserver and etcd into bin/k8s (cached).
	hack/build-k8s-binaries.sh kube-apiserver etcd >/dev/null

##@ Build
.PHONY: build
build: generate ## Build the manager binary.
	go build -o $(LOCALBIN)/manager ./cmd

.PHONY: run
run: ## Run the manager against the current kubeconfig.
	go run ./cmd

##@ Tools
$(CONTROLLER_GEN):
	GOBIN=$(LOCALBIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(LOCALBIN)/controller-gen $@

$(GOLANGCI_LINT):
	GOBIN=$(LOCALBIN) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(LOCALBIN)/golangci-lint $@

##@ Demo
CLUSTER_BINARIES := kube-apiserver etcd kube-controller-manager kube-scheduler kubectl kwok kwokctl

.PHONY: demo
demo: cluster-binaries ## The main job: concurrent kubectl drains of a local 3-zone kwok cluster under a budget (DEMO_ARGS=-teardown to remove the cluster after).
	go run ./hack/kwokdemo $(DEMO_ARGS)

.PHONY: demo-envtest
demo-envtest: k8s-binaries ## A smaller demo on envtest (kube-apiserver and etcd only): evictions through the Eviction API.
	KUBEBUILDER_ASSETS="$$(hack/build-k8s-binaries.sh kube-apiserver etcd | tail -1)" go run ./hack/demo

.PHONY: cluster-binaries
cluster-binaries: ## Build the control plane, kubectl and kwok into bin/k8s (cached).
	hack/build-k8s-binaries.sh $(CLUSTER_BINARIES) >/dev/null

.PHONY: measure-heap
measure-heap: k8s-binaries ## Measured run: manager heap after caching 10,000 pods, with and without the cache transforms (fails over 150 MiB).
	KUBEBUILDER_ASSETS="$$(hack/build-k8s-binaries.sh kube-apiserver etcd | tail -1)" \
		go test -count=1 -tags perf,integration -timeout 20m -v ./test/perf/ -run TestManagerHeapAt10kPods

##@ Local run
WEBHOOK_HOST ?= 127.0.0.1
WEBHOOK_PORT ?= 9443
LOCAL_CERT_DIR ?= $(CURDIR)/bin/local-webhook-certs
OPERATOR_NAMESPACE ?= tdb-system

.PHONY: run-local
run-local: ## Run the operator as a local process against $KUBECONFIG: installs CRDs, self-signed certs and a URL webhook registration.
	go run ./hack/localwebhook -host $(WEBHOOK_HOST) -port $(WEBHOOK_PORT) -cert-dir $(LOCAL_CERT_DIR) -operator-namespace $(OPERATOR_NAMESPACE)
	go run ./cmd --webhook-host $(WEBHOOK_HOST) --webhook-port $(WEBHOOK_PORT) --webhook-cert-dir $(LOCAL_CERT_DIR) \
		--operator-namespace $(OPERATOR_NAMESPACE) --metrics-bind-address 127.0.0.1:8080 --health-probe-bind-address 127.0.0.1:8081 $(ARGS)

.PHONY: run-local-clean
run-local-clean: ## Remove the local webhook registration (evictions stop waiting for a local process).
	go run ./hack/localwebhook -remove

##@ Local cluster
CLUSTER_NAME ?= tdb
.PHONY: cluster-up cluster-down cluster-smoke
cluster-up: cluster-binaries ## A local multi-zone kwok cluster with the real control plane (CLUSTER_NAME, ZONES, NODES_PER_ZONE, POD_READY_DELAY).
	CLUSTER_NAME=$(CLUSTER_NAME) hack/cluster/up.sh
cluster-down: ## Tear the local cluster down (CLUSTER_NAME).
	CLUSTER_NAME=$(CLUSTER_NAME) hack/cluster/down.sh
cluster-smoke: ## Check the local cluster schedules, spreads, drains and replaces pods.
	CLUSTER_NAME=$(CLUSTER_NAME) hack/cluster/smoke-test.sh

.PHONY: bench-eviction
bench-eviction: k8s-binaries ## Measured run: eviction latency PDB vs TDB vs both, handler latency, webhook API requests per eviction (asserted), refusal and drain storms.
	KUBEBUILDER_ASSETS="$$(hack/build-k8s-binaries.sh kube-apiserver etcd | tail -1)" \
		go test -count=1 -tags perf,integration -timeout 20m -v ./test/perf/ -run TestEvictionLatency

.PHONY: bench-drain
bench-drain: cluster-binaries ## Measured run on a local kwok cluster: concurrent kubectl drains of 24 pods in 3 zones under a PDB, a per-zone TDB, a zone-at-a-time TDB and no budget; fails if a budget is exceeded (BENCH_ARGS=-keep keeps the cluster).
	go run ./hack/drainbench $(BENCH_ARGS)

.PHONY: bench-rollout
bench-rollout: cluster-binaries ## Measured run on a local kwok cluster: update of a 24-pod, 3-zone StatefulSet by the built-in RollingUpdate vs the operator's AllDomains and DomainByDomain (2 per zone); wall times, ratios, API writes per updated pod; fails if a budget is exceeded (BENCH_ARGS="-cases a -keep").
	go run ./hack/rolloutbench $(BENCH_ARGS)
