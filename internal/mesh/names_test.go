package mesh

import (
	"errors"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/yamlfile"
)

// A mesh's name, its groups' and tests' names and its hosts' refuse
// control characters and NUL (`mesh apply` printed a name of ESC[2J),
// and the error names them escaped, never raw.
func TestNamesRefuseControlCharacters(t *testing.T) {
	const body = "hosts: {a: , b: }\ngroups: {g: {mesh: [a, b]}}\ntests:\n  t: {test: client -t 5}\nschedules:\n  - {group: g, test: t, repeat: 1m}\n"
	for _, tc := range []struct{ file, src, want string }{
		{"m.yaml", "name: \"\\e[2J\"\n" + body, "name"},
		{"m.yaml", "name: \"a\\0b\"\n" + body, "name"},
		{"m.yaml", "name: \"x\\u202Ey\"\n" + body, "name"}, // a bidirectional override
		{"m\x1b[2J.yaml", body, "name"},
		{"m.yaml", strings.Replace(body, "g: {mesh", "\"g\\e[2J\": {mesh", 1), "a group's name"},
		{"m.yaml", strings.Replace(body, "  t: {test", "  \"t\\r[t1 x:1]\": {test", 1), "a test's name"},
		{"m.yaml", strings.Replace(body, "a: , b: ", "a: , \"b\\e[2J\": ", 1), "host"},
	} {
		_, err := Parse(tc.file, []byte(tc.src))
		var e *yamlfile.Error
		if err == nil || !errors.As(err, &e) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error about the %s", tc.src[:min(len(tc.src), 40)], err, tc.want)
			continue
		}
		if msg := err.Error(); strings.ContainsAny(msg, "\x1b\x00\r\u202e") {
			t.Errorf("the error prints the name raw: %q", msg)
		}
	}
	if _, err := Parse("m.yaml", []byte("name: \"Mesh ümlaut — 1\"\n"+body)); err != nil {
		t.Errorf("a printable name: %v", err)
	}
}
