// Package repocheck holds tests of the repository itself rather than of
// any package: every relative link in the Markdown files resolves inside
// the repository, nothing points at files outside it, comments cite
// sections of docs/ that exist, the package map of docs/architecture.md
// lists every package as its doc comment describes it
// (internal/repocheck/pkgmap generates it), every package sits in a layer
// of docs/architecture.md and imports nothing above it, no function-typed
// field is a hook through which a lower package calls a higher one,
// internal/cli imports few of the module's packages (its commands' work
// is theirs), no tracked file over 1 MB is more than a documented fixture,
// and every fixed sleep in a test under internal/ says why it is not a
// guess at how long an event takes (a bounded poll, a load generator,
// synctest's fake time). It has no code; `go test ./internal/repocheck`
// runs the checks.
package repocheck
