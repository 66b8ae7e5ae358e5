//go:build tools

// Package tools pins the kwok commands built by hack/build-k8s-binaries.sh
// so that `go mod tidy` keeps their dependencies in go.mod and go.sum. It is
// never compiled.
package tools

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
	_ "sigs.k8s.io/kwok/cmd/kwokctl"
)
