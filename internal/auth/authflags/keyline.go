package authflags

import (
	"fmt"
	"os/user"

	"github.com/wireperf/wireperf/internal/auth"
)

// KeyName is the name of a new key line (`wireperf key new [NAME]`):
// the name given (args holds none or one), or else the user's name, or
// else "wireperf". A name with a blank or a '#' would not read back from
// a key file, and is refused.
func KeyName(args []string) (string, error) {
	name := "wireperf"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if len(args) == 1 {
		name = args[0]
	}
	for _, r := range name {
		if r <= ' ' || r == '#' {
			return "", fmt.Errorf("%q: a name without blanks or '#'", name)
		}
	}
	return name, nil
}

// KeyLine is one line of a key file: name and a fresh key of 256 random
// bits in hex.
func KeyLine(name string) (string, error) {
	key, err := auth.NewKey()
	if err != nil {
		return "", err
	}
	return name + " " + key, nil
}
