//go:build tools

// Package tools pins the Kubernetes commands that build-k8s.sh compiles, so that
// `go mod tidy` records every module they need. It is copied into a throwaway
// module (outside the repo) next to a generated go.mod; it is never compiled.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
