//go:build tools

// Package tools pins the Kubernetes commands built by
// hack/build-k8s-binaries.sh so that `go mod tidy` keeps their dependencies
// in go.mod and go.sum. It is never compiled.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
