package lab

// CheckName reports whether name may name a persistent lab (Up, Status,
// Exec, Down): 1-20 characters of [a-z0-9-], starting with a letter or
// digit. The command line checks it before doing anything, to tell a
// mistyped name (a usage error) from a failure.
func CheckName(name string) error { return checkName(name) }
