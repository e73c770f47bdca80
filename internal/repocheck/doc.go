// Package repocheck holds tests of the repository itself rather than of
// any package: every relative link in the Markdown files resolves inside
// the repository, and nothing points at files outside it. It has no code;
// `go test ./internal/repocheck` runs the checks.
package repocheck
