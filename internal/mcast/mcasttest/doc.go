// Package mcasttest builds the network namespaces of the multicast tests
// (internal/mcast, internal/runner/mcastrun) and reads their counters:
// every namespace named mc39-<pid>-<n> and removed when its test ends,
// failed or not.
package mcasttest
