// Package repocheck holds tests of the repository itself rather than of
// any package: every relative link in the Markdown files resolves inside
// the repository, nothing points at files outside it, comments cite
// sections of docs/ that exist, and the package map of
// docs/architecture.md lists every package as its doc comment describes
// it (internal/repocheck/pkgmap generates it), and no function-typed
// field is a hook through which a lower package calls a higher one. It has no code; `go test
// ./internal/repocheck` runs the checks.
package repocheck
