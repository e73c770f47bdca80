//go:build !linux

package daemon

import "os/exec"

// childDiesWithUs: only Linux stops a child when its parent dies.
func childDiesWithUs(*exec.Cmd) {}
