//go:build unix && !linux

package udpmux

const reusePortToo = true
