//go:build tools

// Package tools pins the calico commands that build-calico.sh compiles, so that
// `go mod tidy` records every module they need. It is copied into a throwaway
// module (outside the repo) next to a generated go.mod; it is never compiled.
package tools

import (
	_ "github.com/projectcalico/calico/cni-plugin/cmd/calico"
	_ "github.com/projectcalico/calico/node/cmd/calico-node"
)
