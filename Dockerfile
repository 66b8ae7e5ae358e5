# The manager image: a static binary alone in an empty image, run as a
# non-root user. test/dockerfile checks that the Go version here equals
# go.mod's toolchain, that the build line is the one `make build` runs, and
# that the final stage stays empty, non-root and labelled.

# Build stage: the Go toolchain go.mod names (toolchain go1.26.8), on the
# build machine's platform; GOOS/GOARCH cross-compile to the target's.
FROM --platform=$BUILDPLATFORM golang:1.26.8 AS builder
ARG TARGETOS
ARG TARGETARCH
WORKDIR /workspace
# Modules first, so source edits do not invalidate the download layer.
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY controllers/ controllers/
COPY internal/ internal/
# Same package and flags as `make build` (GO_BUILD_ENV, GO_BUILD_FLAGS).
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} go build -trimpath -ldflags "-s -w" -o manager ./cmd

# Final stage: nothing but the binary. No shell, no package manager, no CA
# bundle (the manager only talks to the API server, whose CA comes with the
# service account token).
FROM scratch
ARG VERSION=dev
LABEL org.opencontainers.image.title="tdb-operator" \
      org.opencontainers.image.description="Disruption budgets per failure domain for Kubernetes: the TopologyDisruptionBudget controller and its pods/eviction webhook" \
      org.opencontainers.image.source="https://github.com/tdb-operator/tdb-operator" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}"
WORKDIR /
COPY --from=builder /workspace/manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
