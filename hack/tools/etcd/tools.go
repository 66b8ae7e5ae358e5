//go:build tools

// Package tools pins the etcd command built by hack/build-k8s-binaries.sh so
// that `go mod tidy` keeps its dependencies in go.mod and go.sum. It is never
// compiled.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
)
