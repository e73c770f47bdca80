// Package repocheck holds tests of the repository itself rather than of
// any package: every relative link in the Markdown files resolves inside
// the repository, nothing points at files outside it, and every fixed
// sleep in a test under internal/ says why it is not a guess at how long
// an event takes (a bounded poll, a load generator, synctest's fake
// time). It has no code;
// `go test ./internal/repocheck` runs the checks.
package repocheck
