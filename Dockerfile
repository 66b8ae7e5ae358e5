# Builds the manager as a static binary and ships it alone in an empty,
# non-root image. The Go version matches go.mod.
FROM golang:1.26.8 AS builder
ARG TARGETOS=linux
ARG TARGETARCH=amd64
WORKDIR /workspace
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY controllers/ controllers/
COPY internal/ internal/
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -ldflags "-s -w" -o manager ./cmd

FROM scratch
LABEL org.opencontainers.image.title="tdb-operator" \
      org.opencontainers.image.description="Disruption budgets per failure domain for Kubernetes" \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /
COPY --from=builder /workspace/manager .
USER 65532:65532
ENTRYPOINT ["/manager"]
