# tdb-operator Makefile. Every tool is pinned and built from Go modules into
# bin/ (git-ignored), so a fresh machine with Go needs nothing else.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

LOCALBIN ?= $(CURDIR)/bin
CONTROLLER_GEN_VERSION ?= v0.23.0
GOLANGCI_LINT_VERSION ?= v2.15.0
# kustomize v5.8.3 needs Go 1.27; v5.8.2 is the newest that builds with ours.
KUSTOMIZE_VERSION ?= v5.8.2
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
KUSTOMIZE ?= $(LOCALBIN)/kustomize-$(KUSTOMIZE_VERSION)
# helm is pinned by its build module, hack/tools/helm (go.mod's require line).
HELM_VERSION := $(shell sed -n 's|^require helm.sh/helm/v3 ||p' hack/tools/helm/go.mod)
HELM ?= $(LOCALBIN)/helm-$(HELM_VERSION)

# hack/bundlegen, the OLM bundle generator, is a Go module of its own (its
# tests need kustomize; the operator's do not): `./...` at the root does not
# reach it, so vet, lint and the tests run it from its directory too.
BUNDLEGEN_DIR := hack/bundlegen

# Unit tests are pure; integration tests run against a real kube-apiserver and
# etcd built by hack/build-k8s-binaries.sh.
UNIT_PKGS ?= ./...
INTEGRATION_PKGS ?= ./test/integration/...
GO_TEST_FLAGS ?= -count=1
# A count, not a duration: go1.26's fuzz coordinator can fail a duration run
# with "context deadline exceeded" when its clock ends mid-call (golang/go#75804,
# fixed in go1.27). 40,000 calls take about 20 s here.
FUZZTIME ?= 40000x

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
vet: ## go vet every package, integration ones and the hack/bundlegen module included.
	go vet ./...
	go -C $(BUNDLEGEN_DIR) vet ./...
	go vet -tags integration ./test/...
	go vet -tags perf,integration ./test/perf/...
	go vet -tags e2e ./test/e2e/... ./test/install/ ./test/helm/

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint (pinned) on the operator's module and on the hack/bundlegen module.
	$(GOLANGCI_LINT) run ./...
	cd $(BUNDLEGEN_DIR) && $(GOLANGCI_LINT) run --config $(CURDIR)/.golangci.yml ./...

.PHONY: verify
verify: generate manifests $(KUSTOMIZE) bundlegen helmgen lint ## Fail when generated files (deepcopy, CRD, RBAC, the OLM bundle, the Helm chart) or formatting are stale, or golangci-lint (duplicate detection included) finds anything.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "not gofmt-clean:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(verify_bundle)
	$(verify_chart)
	@git diff --exit-code -- api config $(BUNDLE_FILES) $(CHART_DIR) || { echo "generated files are stale: run 'make generate manifests bundle chart' and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- api config $(BUNDLE_FILES) $(CHART_DIR))" || { echo "untracked generated files:"; git status --porcelain -- api config $(BUNDLE_FILES) $(CHART_DIR); exit 1; }

##@ Test
# make test runs the quick checks one after the other (the first failure stops
# it), then the suites that take minutes in two lanes side by side
# (hack/run-suites.sh): the main e2e alone in one (about 21 minutes on 2
# cores), the others one after the other in the second (about as long). More
# lanes on 2 cores would make the suites' timings flaky. Every lane suite has
# its own cluster and ports; each one's output goes to bin/test-logs/, and a
# failed one's is printed at the end, before the table of times.
TEST_QUICK := verify vet test-unit test-rules test-bundlegen test-chart
TEST_LANE_E2E := test-e2e
TEST_LANE_OTHERS := test-integration test-install test-helm-install test-compat test-e2e-plugin test-e2e-scope test-e2e-routing test-e2e-karpenter

.PHONY: test
test: test-prerequisites ## The whole suite: unit (with a short fuzz run), the alerts with promtool, the bundle generator's tests, the Helm chart's (lint, templates against config/), integration (envtest), install (kustomize, then Helm, on local kwok clusters), the support matrix (the oldest Kubernetes minor claimed and the current one), e2e (local kwok clusters: the main suite, kubectl-tdb, the webhook scope and in-zone endpoints) and e2e with the real Karpenter.
	hack/run-suites.sh -s "$(TEST_QUICK)" "$(TEST_LANE_E2E)" "$(TEST_LANE_OTHERS)"

.PHONY: test-fast
test-fast: ## The inner loop (about 5 minutes on 2 cores): the quick checks of make test (verify, vet, unit, rules, bundle generator, chart) and integration, one after the other, with their times.
	hack/run-suites.sh -s "$(TEST_QUICK) test-integration"

# What the lanes use, built before they start so that no two lanes build
# the same binary at once. bin/manager is built as test/kwokenv builds it:
# the suites' own builds then find it up to date and leave the file alone
# while another lane runs it.
.PHONY: test-prerequisites
test-prerequisites: cluster-binaries compat-binaries karpenter-binaries k8s-binaries promtool-binary $(KUSTOMIZE) $(HELM) $(GOLANGCI_LINT) $(CONTROLLER_GEN)
	go build -o $(LOCALBIN)/manager ./cmd

.PHONY: test-unit
test-unit: ## Pure unit tests of the operator's module (no kustomize, no cluster), plus a short run of the budget fuzzer.
	go test $(GO_TEST_FLAGS) $(UNIT_PKGS)
	go test -run='^$$' -fuzz=FuzzCompute -fuzztime=$(FUZZTIME) ./internal/budget/

.PHONY: test-rules
test-rules: promtool-binary ## The alerts of config/prometheus with the pinned promtool: `promtool check rules`, and `promtool test rules` on test/monitoring/rules_test.yaml (every alert fires, and stays quiet, on synthetic series).
	PROMTOOL="$$(hack/build-promtool.sh 2>/dev/null | tail -1)" go test $(GO_TEST_FLAGS) -run '^TestRulesWithPromtool$$' -v ./test/monitoring/

.PHONY: test-bundlegen
test-bundlegen: $(KUSTOMIZE) ## Tests of the hack/bundlegen module: the generator, and the committed bundle checked against OLM's rules and against config/default rendered with the pinned kustomize.
	KUSTOMIZE=$(KUSTOMIZE) go -C $(BUNDLEGEN_DIR) test $(GO_TEST_FLAGS) ./...

.PHONY: test-chart
test-chart: $(KUSTOMIZE) $(HELM) ## The Helm chart (dist/chart) under the pinned helm: helm lint, and helm template with several value sets compared object by object with config/ rendered by the pinned kustomize.
	HELM=$(HELM) KUSTOMIZE=$(KUSTOMIZE) go -C $(BUNDLEGEN_DIR) test $(GO_TEST_FLAGS) ./chart/

.PHONY: test-integration
test-integration: k8s-binaries ## envtest suites against a real kube-apiserver and etcd.
	KUBEBUILDER_ASSETS="$$(hack/build-k8s-binaries.sh kube-apiserver etcd | tail -1)" \
		go test $(GO_TEST_FLAGS) -tags integration -timeout 30m $(INTEGRATION_PKGS) -ginkgo.v

.PHONY: test-e2e
test-e2e: cluster-binaries ## End-to-end suite on a fresh local kwok cluster (tdb-e2e, real control plane, concurrent kubectl drains, ports 19443/18080/18081); about 22 minutes on 2 cores (partition specs included).
	go test -tags e2e -count=1 -timeout 40m ./test/e2e/ -ginkgo.v

.PHONY: test-e2e-plugin
test-e2e-plugin: cluster-binaries ## kubectl-tdb end to end on a fresh local kwok cluster (tdb-plugin, ports 19843/18680/18681): can-drain/why against server-side dry-run evictions and kubectl drain --dry-run=server, plan waves drained by real concurrent kubectl drains with no refusal, exit codes, status; about 3 minutes.
	go test -v -tags e2e -count=1 -timeout 15m ./test/e2e/plugin/ -ginkgo.v

.PHONY: test-e2e-scope
test-e2e-scope: cluster-binaries ## The webhook's opt-in scope on a local kwok cluster (tdb-scope, ports 19943/18780/18781): a budget outside it reports NotEnforced; with the operator stopped, evictions outside it go on and a labelled namespace's are refused; with the default scope every namespace's are refused.
	go test -v -tags e2e -count=1 -timeout 15m ./test/e2e/scope/

.PHONY: test-e2e-routing
test-e2e-routing: cluster-binaries ## In-zone endpoints for topology-aware routing on a local kwok cluster (tdb-routing, ports 20043/18880/18881): during concurrent kubectl drains of every node, a TDB with per-zone minAvailable 2 keeps each zone's ready endpoints in a PreferClose Service's EndpointSlices at 2 or more, while a single PDB lets a zone drop to 0.
	go test -v -tags e2e -count=1 -timeout 15m ./test/e2e/routing/

.PHONY: test-e2e-karpenter
test-e2e-karpenter: cluster-binaries karpenter-binaries ## The real Karpenter (kwok provider) replaces a 3-zone pool under a TDB, without and with mirrored PDBs, side by side (tdb-karpenter, ports 19643/18380/18381 and 18480/18481); fails if the budget is exceeded, a pod is force-deleted, or with mirrors a node is chosen whose pods the budget refuses.
	go test -v -tags e2e -count=1 -timeout 40m ./test/e2e/karpenter/ -run TestKarpenterReplacesAPoolWithinTheBudget

# The support matrix (docs/install.md#supported-kubernetes-versions): the
# build modules of the oldest Kubernetes minor the chart and the bundle
# claim and of the current one (hack/tools/kube, what every other suite runs).
COMPAT_KUBE_MOD_DIRS := hack/tools/kube-1.33 hack/tools/kube

.PHONY: compat-binaries
compat-binaries: ## Build the control plane, kubectl and kwok of every minor of the support matrix (COMPAT_KUBE_MOD_DIRS) into bin/k8s/<version>/ (cached).
	for mod in $(COMPAT_KUBE_MOD_DIRS); do KUBE_MOD_DIR=$$mod hack/build-k8s-binaries.sh $(CLUSTER_BINARIES) >/dev/null; done

# Per minor: its binaries (checked to be the version its module pins), the
# CRD's specs of test/integration/controller (label api-validation) on its
# kube-apiserver, then test/e2e/compat on a kwok cluster of that minor.
.PHONY: test-compat
test-compat: compat-binaries $(KUSTOMIZE) $(HELM) ## The support matrix, on the oldest Kubernetes minor claimed (1.33) and the current one: the CRD's validation rules and invalid-spec cases on its kube-apiserver (envtest), the kustomize and Helm installs in a server-side dry run, the zone label of mirrored PDBs, and concurrent kubectl drains under a budget with mirrors on a kwok cluster of that minor (tdb-compat, ports 16743/20343/19180/19181).
	for mod in $(COMPAT_KUBE_MOD_DIRS); do \
		bin="$$(KUBE_MOD_DIR=$$mod hack/build-k8s-binaries.sh $(CLUSTER_BINARIES) 2>/dev/null | tail -1)"; \
		want="$$(cd $$mod && GOWORK=off go list -mod=readonly -m -f '{{.Version}}' k8s.io/kubernetes)"; \
		[ "$${bin##*/}" = "$$want" ] || { echo "KUBE_MOD_DIR=$$mod built $${bin##*/}, want $$want"; exit 1; }; \
		echo "=== Kubernetes $$want ($$mod): the CRD on its kube-apiserver"; \
		KUBEBUILDER_ASSETS="$$bin" go test -v $(GO_TEST_FLAGS) -tags integration -timeout 10m ./test/integration/controller/ \
			-ginkgo.label-filter=api-validation -ginkgo.fail-on-empty; \
		echo "=== Kubernetes $$want ($$mod): installs, mirrors and drains on a kwok cluster"; \
		KUBE_MOD_DIR=$$mod COMPAT_KUBE_BIN="$$bin" KUSTOMIZE=$(KUSTOMIZE) HELM=$(HELM) \
			go test -v -tags e2e -count=1 -timeout 20m ./test/e2e/compat/ -ginkgo.v; \
	done

.PHONY: test-install
test-install: cluster-binaries $(KUSTOMIZE) ## Install test on a fresh local kwok cluster (tdb-install, API server port 16443): config/default and the overlays accepted object by object by a server-side dry run, then applied, then removed.
	KUSTOMIZE=$(KUSTOMIZE) go test -v -tags e2e -count=1 -timeout 15m ./test/install/ -ginkgo.v

.PHONY: test-helm-install
test-helm-install: cluster-binaries $(HELM) ## Helm install test on a fresh local kwok cluster (tdb-helm, API server port 16543): helm install, the manager run with the installed ServiceAccount's rights, helm upgrade (the certificate Secret kept), helm uninstall.
	HELM=$(HELM) go test -v -tags e2e -count=1 -timeout 15m ./test/helm/ -ginkgo.v

.PHONY: bench
bench: ## Benchmarks of the budget engine.
	go test -run='^$$' -bench=. -benchmem ./internal/budget/

.PHONY: k8s-binaries
k8s-binaries: ## Build pinned kube-apiserver and etcd into bin/k8s (cached).
	hack/build-k8s-binaries.sh kube-apiserver etcd >/dev/null

.PHONY: promtool-binary
promtool-binary: ## Build the pinned promtool (hack/tools/prometheus, Prometheus v3.16.0) into bin/ (cached; GOFLAGS=-p=1 on a small machine).
	hack/build-promtool.sh >/dev/null

##@ Build
# The manager build, shared by `make build` and the Dockerfile's build stage:
# a static binary without local paths or symbol tables. test/dockerfile fails
# when the Dockerfile's `go build` line drifts from these.
GO_BUILD_ENV := CGO_ENABLED=0
GO_BUILD_FLAGS := -trimpath -ldflags "-s -w"
MANAGER_PKG := ./cmd

# Images. No registry is assumed: set IMAGE_TAG_BASE (or IMG) to your own,
# e.g. IMAGE_TAG_BASE=example.invalid/tdb-operator. VERSION defaults to the
# version of the committed OLM bundle (bundle/VERSION).
CONTAINER_TOOL ?= docker
VERSION ?= $(shell cat bundle/VERSION 2>/dev/null || echo 0.0.0)
IMAGE_TAG_BASE ?= tdb-operator
IMG ?= $(IMAGE_TAG_BASE):v$(VERSION)
BUNDLE_IMG ?= $(IMAGE_TAG_BASE)-bundle:v$(VERSION)

.PHONY: build
build: generate ## Build the manager binary (static, as in the image).
	$(GO_BUILD_ENV) go build $(GO_BUILD_FLAGS) -o $(LOCALBIN)/manager $(MANAGER_PKG)

.PHONY: plugin
plugin: ## Build the kubectl plugin into bin/kubectl-tdb (kubectl tdb can-drain, why, plan, status; docs/kubectl-tdb.md).
	$(GO_BUILD_ENV) go build -ldflags "-X github.com/tdb-operator/tdb-operator/internal/plugin.Version=v$(VERSION)" -o $(LOCALBIN)/kubectl-tdb ./cmd/kubectl-tdb

# The krew release of kubectl-tdb: an archive per platform, sha256sums.txt and
# the krew manifest rendered from hack/krew/tdb.yaml.tmpl, in
# bin/plugin-release/$(PLUGIN_VERSION)/; test/krew (make test-unit) validates it.
PLUGIN_VERSION ?= v$(VERSION)

.PHONY: plugin-release
plugin-release: ## Cross-compile kubectl-tdb (linux/darwin amd64+arm64, windows amd64) into reproducible archives and render the krew manifest for PLUGIN_VERSION (default v$(VERSION)) into bin/plugin-release/.
	hack/plugin-release.sh $(PLUGIN_VERSION)

.PHONY: docker-build
docker-build: ## Build the manager image IMG with $(CONTAINER_TOOL) (not run in tests: test/dockerfile checks the Dockerfile).
	$(CONTAINER_TOOL) build --build-arg VERSION=$(VERSION) -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the manager image IMG.
	$(CONTAINER_TOOL) push $(IMG)

##@ OLM bundle
# bundle/ and bundle.Dockerfile are generated from config/default by
# hack/bundlegen for VERSION (x.y.z, recorded in bundle/VERSION) and IMG, and
# checked by its tests (make test-bundlegen); `make verify` regenerates them
# and fails on a difference. hack/bundlegen is a Go module of its own: it is
# built into bin/ and run here, at the root, which its default paths (the CRD
# and sample directories, -out) are relative to. The scorecard's tests run in operator-framework's scorecard-test
# image (tag: the operator-sdk release that runs them); no registry is named
# here: example.invalid stands for the one you pull it from.
SCORECARD_TEST_IMG ?= example.invalid/operator-framework/scorecard-test:v1.32.0
BUNDLE_FILES := bundle bundle.Dockerfile
BUNDLEGEN := $(LOCALBIN)/bundlegen
BUNDLEGEN_FLAGS = -version $(VERSION) -image $(IMG) -scorecard-image $(SCORECARD_TEST_IMG)
# What the committed bundle is generated with, whatever the environment or the
# command line sets: the committed bundle/VERSION, and the images' defaults as
# this Makefile's `?=` lines set them (IMG = $(IMAGE_TAG_BASE):v$(VERSION)).
makefile_default = $(shell sed -n 's/^$(1) ?= //p' $(firstword $(MAKEFILE_LIST)))
VERIFY_BUNDLE_VERSION = $(shell cat bundle/VERSION)
VERIFY_BUNDLEGEN_FLAGS = -version $(VERIFY_BUNDLE_VERSION) \
	-image $(call makefile_default,IMAGE_TAG_BASE):v$(VERIFY_BUNDLE_VERSION) \
	-scorecard-image $(call makefile_default,SCORECARD_TEST_IMG)

# Regenerate the bundle into a temporary directory, with the committed
# VERSION and the default images (an exported IMG, IMAGE_TAG_BASE, VERSION or
# SCORECARD_TEST_IMG does not count), and compare it with bundle/ and
# bundle.Dockerfile.
define verify_bundle
@tmp="$$(mktemp -d)"; trap 'rm -rf "$$tmp"' EXIT; \
	$(KUSTOMIZE) build config/default | $(BUNDLEGEN) $(VERIFY_BUNDLEGEN_FLAGS) -out "$$tmp" \
	&& diff -ru bundle "$$tmp/bundle" && diff -u bundle.Dockerfile "$$tmp/bundle.Dockerfile" \
	|| { echo "the OLM bundle is stale: run 'make bundle VERSION=$(VERIFY_BUNDLE_VERSION)' with IMG, IMAGE_TAG_BASE and SCORECARD_TEST_IMG unset, and commit"; exit 1; }
endef

.PHONY: bundlegen
bundlegen: ## Build the OLM bundle generator (the hack/bundlegen module) into bin/bundlegen.
	go -C $(BUNDLEGEN_DIR) build -o $(BUNDLEGEN) .

.PHONY: bundle
bundle: manifests $(KUSTOMIZE) bundlegen ## Generate the OLM bundle (bundle/, bundle.Dockerfile) for VERSION=x.y.z and IMG from config/default.
	$(KUSTOMIZE) build config/default | $(BUNDLEGEN) $(BUNDLEGEN_FLAGS) -out .

.PHONY: verify-bundle
verify-bundle: $(KUSTOMIZE) bundlegen ## Fail when bundle/ differs from what `make bundle` generates for the committed VERSION.
	$(verify_bundle)

##@ Helm chart
# dist/chart is generated from config/default, config/certmanager and (when
# it exists) config/prometheus by hack/bundlegen/cmd/helmgen, for the
# committed bundle/VERSION and the default image repository; `make verify`
# regenerates it into a temporary directory and fails on a difference.
CHART_DIR := dist/chart
HELMGEN := $(LOCALBIN)/helmgen
# render_chart OUT: the chart for the committed VERSION into OUT.
define render_chart
tmp="$$(mktemp -d)"; trap 'rm -rf "$$tmp"' EXIT; \
	$(KUSTOMIZE) build config/default >"$$tmp/default.yaml" && \
	$(KUSTOMIZE) build config/certmanager >"$$tmp/certmanager.yaml" && \
	prom=""; if [ -f config/prometheus/kustomization.yaml ]; then \
		$(KUSTOMIZE) build config/prometheus >"$$tmp/prometheus.yaml" && prom="$$tmp/prometheus.yaml"; fi && \
	$(HELMGEN) -version $(VERIFY_BUNDLE_VERSION) -image-repository $(call makefile_default,IMAGE_TAG_BASE) \
		-default "$$tmp/default.yaml" -certmanager "$$tmp/certmanager.yaml" -prometheus "$$prom" -out $(1)
endef

define verify_chart
@out="$$(mktemp -d)"; trap 'rm -rf "$$out"' EXIT; \
	( $(call render_chart,"$$out/chart") ) && diff -ru $(CHART_DIR) "$$out/chart" \
	|| { echo "the Helm chart is stale: run 'make chart' and commit"; exit 1; }
endef

.PHONY: helmgen
helmgen: ## Build the Helm chart generator (hack/bundlegen/cmd/helmgen) into bin/helmgen.
	go -C $(BUNDLEGEN_DIR) build -o $(HELMGEN) ./cmd/helmgen

.PHONY: chart
chart: manifests $(KUSTOMIZE) helmgen ## Generate the Helm chart (dist/chart) from config/ for the committed bundle/VERSION.
	@$(call render_chart,$(CHART_DIR))

.PHONY: verify-chart
verify-chart: $(KUSTOMIZE) helmgen ## Fail when dist/chart differs from what `make chart` generates.
	$(verify_chart)

.PHONY: helm-binary
helm-binary: $(HELM) ## Build the pinned helm (hack/tools/helm) into bin/.

.PHONY: bundle-build
bundle-build: ## Build the bundle image BUNDLE_IMG with $(CONTAINER_TOOL).
	$(CONTAINER_TOOL) build -f bundle.Dockerfile -t $(BUNDLE_IMG) .

.PHONY: bundle-push
bundle-push: ## Push the bundle image BUNDLE_IMG.
	$(CONTAINER_TOOL) push $(BUNDLE_IMG)

.PHONY: run
run: ## Run the manager against the current kubeconfig.
	go run ./cmd

##@ Deployment
# For a real cluster (the current kubeconfig's): config/default with the
# manager image IMG, set in a temporary overlay so config/ stays as committed.
KUBECTL ?= kubectl
# The overlay lives two levels below the repository (kustomize refuses
# absolute resource paths).
DEPLOY_DIR := $(CURDIR)/bin/deploy

.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Build the pinned kustomize into bin/.

.PHONY: install
install: $(KUSTOMIZE) ## Install the CRD only.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply -f -

.PHONY: uninstall
uninstall: $(KUSTOMIZE) ## Remove the CRD, and with it every TopologyDisruptionBudget.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found -f -

.PHONY: deploy
deploy: $(KUSTOMIZE) ## Install the operator (config/default) with the manager image IMG.
	rm -rf $(DEPLOY_DIR) && mkdir -p $(DEPLOY_DIR)
	cd $(DEPLOY_DIR) && $(KUSTOMIZE) create --resources ../../config/default && $(KUSTOMIZE) edit set image controller=$(IMG)
	$(KUSTOMIZE) build $(DEPLOY_DIR) | $(KUBECTL) apply -f -

.PHONY: undeploy
undeploy: $(KUSTOMIZE) ## Remove the operator: the webhook configuration first (evictions stop waiting for it), then everything else, CRD and budgets included.
	$(KUBECTL) delete --ignore-not-found validatingwebhookconfiguration tdb-validating-webhook-configuration
	$(KUSTOMIZE) build config/default | $(KUBECTL) delete --ignore-not-found --wait=false -f -

##@ Tools
$(KUSTOMIZE):
	GOBIN=$(LOCALBIN) go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)
	mv $(LOCALBIN)/kustomize $@

$(CONTROLLER_GEN):
	GOBIN=$(LOCALBIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(LOCALBIN)/controller-gen $@

# helm's version variables, as its release builds set them: its own, and the
# Kubernetes version `helm template` and `helm lint` assume (that of the
# client-go it is built with; without it, v1.20 and the chart's kubeVersion
# refuses it).
$(HELM): hack/tools/helm/go.mod hack/tools/helm/go.sum
	cd hack/tools/helm && kube_minor="$$(GOWORK=off go list -mod=readonly -m -f '{{.Version}}' k8s.io/client-go | cut -d. -f2)" && \
		GOWORK=off CGO_ENABLED=0 go build -mod=readonly -trimpath -buildvcs=false -ldflags "-s -w \
		-X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) -X helm.sh/helm/v3/internal/version.gitTreeState=clean \
		-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$$kube_minor \
		-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$$kube_minor" \
		-o $@.tmp helm.sh/helm/v3/cmd/helm
	mv $@.tmp $@

$(GOLANGCI_LINT):
	GOBIN=$(LOCALBIN) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(LOCALBIN)/golangci-lint $@

##@ Demo
CLUSTER_BINARIES := kube-apiserver etcd kube-controller-manager kube-scheduler kubectl kwok kwokctl

# The demo, the manager and kubectl-tdb (built where test/kwokenv builds
# them, so that the demo finds them up to date) compile side by side with the
# cluster binaries, at a lower priority: on a fresh machine they take the CPU
# the longer Kubernetes build leaves idle.
.PHONY: demo
demo: ## The main job: concurrent kubectl drains of a local 3-zone kwok cluster under a budget (DEMO_ARGS=-teardown to remove the cluster after).
	@hack/build-k8s-binaries.sh $(CLUSTER_BINARIES) >/dev/null & k8s=$$!; \
	nice -n 5 sh -c 'go build -o $(LOCALBIN)/demo ./test/demo && go build -o $(LOCALBIN)/manager ./cmd && go build -o $(LOCALBIN)/kubectl-tdb ./cmd/kubectl-tdb'; ops=$$?; \
	wait $$k8s || exit 1; exit $$ops
	$(LOCALBIN)/demo $(DEMO_ARGS)

.PHONY: cluster-binaries
cluster-binaries: ## Build the control plane, kubectl and kwok into bin/k8s (cached).
	hack/build-k8s-binaries.sh $(CLUSTER_BINARIES) >/dev/null

.PHONY: karpenter-binaries
karpenter-binaries: ## Build Karpenter's kwok cloud provider and copy its CRDs into bin/karpenter (cached; fetches the Go toolchain its go.mod names).
	hack/build-karpenter.sh >/dev/null

.PHONY: measure-heap
measure-heap: k8s-binaries ## Measured run: manager heap after caching 10,000 pods, with and without the cache transforms (fails over 150 MiB).
	KUBEBUILDER_ASSETS="$$(hack/build-k8s-binaries.sh kube-apiserver etcd | tail -1)" \
		go test -count=1 -tags perf,integration -timeout 20m -v ./test/perf/ -run TestManagerHeapAt10kPods

##@ Local run
WEBHOOK_HOST ?= 127.0.0.1
WEBHOOK_PORT ?= 9443
LOCAL_CERT_DIR ?= $(CURDIR)/bin/local-webhook-certs
OPERATOR_NAMESPACE ?= tdb-system
# Which namespaces send their evictions to the webhook: all (every namespace
# but the operator's) or labelled (only policy.tdb.dev/enforce=true).
WEBHOOK_SCOPE ?= all

.PHONY: run-local
run-local: ## Run the operator as a local process against $KUBECONFIG: installs CRDs, self-signed certs and a URL webhook registration (WEBHOOK_SCOPE=all|labelled).
	go run ./hack/localwebhook -host $(WEBHOOK_HOST) -port $(WEBHOOK_PORT) -cert-dir $(LOCAL_CERT_DIR) -operator-namespace $(OPERATOR_NAMESPACE) -scope $(WEBHOOK_SCOPE)
	go run ./cmd --webhook-host $(WEBHOOK_HOST) --webhook-port $(WEBHOOK_PORT) --webhook-cert-dir $(LOCAL_CERT_DIR) --cert-rotation=false --webhook-config-name tdb-operator-local \
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
bench-drain: cluster-binaries ## Measured run on a local kwok cluster: concurrent kubectl drains of 24 pods in 3 zones under a PDB, a per-zone TDB, a zone-at-a-time TDB, no budget, and both TDBs again with mirrored PDBs (their PDB writes per eviction); fails if a budget is exceeded (BENCH_ARGS=-keep keeps the cluster).
	go test -count=1 -tags perf -timeout 90m -v ./test/perf/drainbench -run TestDrainBench -args $(BENCH_ARGS)

.PHONY: bench-candrain
bench-candrain: cluster-binaries ## Measured run on a local kwok cluster (tdb-candrain: 1,000 nodes in 3 zones, 10,000 pods, a TDB or PDB per workload): wall time and API requests of kubectl tdb can-drain on 100 nodes; fails if the median is 2 s or more or a run makes more than 150 requests (NODES, PODS, DRAIN_NODES, RUNS, OUT, KEEP=1).
	go test -count=1 -tags perf -timeout 90m -v ./test/perf/candrain -run TestCanDrainBench

.PHONY: bench-scale
bench-scale: cluster-binaries ## Measured run on a local kwok cluster (tdb-scale: 1,000 nodes, 10,000 pods, 100 budgets; about 22 minutes on 2 cores): a tenth of the nodes recycled by concurrent drains (drain library) under a TDB per workload, then under the closest PDB per workload, then with no budget (the floor); latencies, violations (an independent watcher), status lag, the operator's CPU, heap and writes, the machine's CPU by process, API requests, profiles; see docs/scale.md (NODES, PODS, BUDGETS, ROUNDS, RECYCLE, OUT, KEEP=1).
	go test -count=1 -tags perf -timeout 180m -v ./test/perf/scalebench -run TestScaleBench

.PHONY: bench-rollout
bench-rollout: cluster-binaries ## Measured run on a local kwok cluster: update of a 24-pod, 3-zone StatefulSet by the built-in RollingUpdate vs the operator's AllDomains and DomainByDomain (2 per zone); wall times, ratios, API writes per updated pod; fails if a budget is exceeded (BENCH_ARGS="-cases a -keep").
	go test -count=1 -tags perf -timeout 90m -v ./test/perf/rolloutbench -run TestRolloutBench -args $(BENCH_ARGS)

.PHONY: bench-partitions
bench-partitions: cluster-binaries ## Measured run on a local kwok cluster (tdb-partitions, ports 20243/19080/19081): every node of a Mimir-like layout (ingester-zone-{a,b,c}, 30 partitions) drained at once (drain library) under a partition budget, one zone at a time, one PDB, and the partition budget with minReadySeconds 10; wall times, ratios, an independent watcher's replicas of a partition down and zones degraded; fails on a violation (BENCH_ARGS="-partitions 60 -keep").
	go test -count=1 -tags perf -timeout 90m -v ./test/perf/partitionbench -run TestPartitionBench -args $(BENCH_ARGS)
