package testflags

import "testing"

// Each command's declarations name a flag once and a shorthand once, and
// no flag is both declared and refused.
func TestDeclaredOnce(t *testing.T) {
	for _, c := range []string{"client", "rr", "udpmon", "trace", "ping", "tcp-connect"} {
		names, shorts := map[string]bool{}, map[string]string{}
		for _, f := range Of(c) {
			if names[f.Name] {
				t.Errorf("%s: --%s declared twice", c, f.Name)
			}
			names[f.Name] = true
			if _, clash := refused[f.Name]; clash {
				t.Errorf("%s: --%s is both allowed and refused", c, f.Name)
			}
			if (f.Group || f.Axis) && c != "client" {
				t.Errorf("%s: --%s: only the client's flags are group flags or axes", c, f.Name)
			}
			if f.Short == "" {
				continue
			}
			if other, dup := shorts[f.Short]; dup {
				t.Errorf("%s: -%s for --%s and --%s", c, f.Short, f.Name, other)
			}
			if _, clash := shortRefused[f.Short]; clash {
				t.Errorf("%s: -%s is both allowed and refused", c, f.Short)
			}
			shorts[f.Short] = f.Name
		}
	}
	if got := len(Group()); got != 10 {
		t.Errorf("%d group flags, want the 10 a group file takes", got)
	}
}
