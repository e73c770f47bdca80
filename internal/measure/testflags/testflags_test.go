package testflags

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

var commandNames = []string{"client", "rr", "udpmon", "trace", "ping", "tcp-connect"}

// Each command's declarations name a flag once and a shorthand once, and
// no flag a line may carry in one command is refused in another (a
// refused name is refused in every line).
func TestDeclaredOnce(t *testing.T) {
	for _, c := range commandNames {
		names, shorts := map[string]bool{}, map[string]string{}
		for _, f := range Declared(c) {
			if names[f.Name] {
				t.Errorf("%s: --%s declared twice", c, f.Name)
			}
			names[f.Name] = true
			if f.Shared != (f.Help == "") {
				t.Errorf("%s: --%s: help %q, shared %v: a flag has its own help or its helper's", c, f.Name, f.Help, f.Shared)
			}
			if f.Refused == "" {
				if _, clash := Refused(f.Name); clash {
					t.Errorf("%s: --%s is both allowed and refused", c, f.Name)
				}
				if _, clash := RefusedShort(f.Short); clash && f.Short != "" {
					t.Errorf("%s: -%s is both allowed and refused", c, f.Short)
				}
			}
			if (f.Group || f.Axis) && (c != "client" || f.Refused != "") {
				t.Errorf("%s: --%s: only the client's line flags are group flags or axes", c, f.Name)
			}
			if f.Short == "" {
				continue
			}
			if other, dup := shorts[f.Short]; dup {
				t.Errorf("%s: -%s for --%s and --%s", c, f.Short, f.Name, other)
			}
			shorts[f.Short] = f.Name
		}
	}
	if got := len(Group()); got != 10 {
		t.Errorf("%d group flags, want the 10 a group file takes", got)
	}
	if why, ok := Refused("logfile"); !ok || why != namesFile {
		t.Errorf("--logfile: %q %v", why, ok)
	}
	if long, ok := RefusedShort("J"); !ok || long != "json" {
		t.Errorf("-J: %q %v", long, ok)
	}
	if _, ok := Lookup("client", "json"); ok {
		t.Error("client --json: a line may carry it")
	}
}

var decls = []Flag{
	{Name: "time", Short: "t", Kind: Int, Help: "how long"},
	{Name: "udp", Short: "u", Kind: Bool, Help: "UDP"},
	{Name: "stamp", Kind: Word, NoOpt: "%c", Help: "a `FORMAT`"},
	{Name: "db", Kind: Word, Shared: true},
}

// Register makes exactly the declared flags, with their help, shorthand
// and the bound variable's value as default.
func TestRegister(t *testing.T) {
	var (
		secs  = 10
		udp   bool
		stamp string
		db    string
	)
	shared := pflag.NewFlagSet("shared", pflag.ContinueOnError)
	shared.StringVar(&db, "db", "", "the archive")
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	Register(fs, decls, Binds{"time": &secs, "udp": &udp, "stamp": &stamp}.With(Adopt(shared)))
	if err := fs.Parse([]string{"-u", "--stamp", "--db", "a.db"}); err != nil {
		t.Fatal(err)
	}
	if secs != 10 || !udp || stamp != "%c" || db != "a.db" {
		t.Errorf("parsed %d %v %q %q", secs, udp, stamp, db)
	}
	got := fs.FlagUsages()
	for _, want := range []string{"-t, --time int", "how long (default 10)", "-u, --udp", "--stamp FORMAT[=\"%c\"]", "--db string", "the archive"} {
		if !strings.Contains(got, want) {
			t.Errorf("usage has no %q:\n%s", want, got)
		}
	}
}

// A flag bound and not declared, declared and not bound, or bound
// against its kind can't make a command.
func TestRegisterRefusesWhatIsNotDeclared(t *testing.T) {
	var n int
	var b bool
	for name, c := range map[string]struct {
		decls []Flag
		binds Binds
	}{
		"undeclared":    {decls[:1], Binds{"time": &n, "udp": &b}},
		"unbound":       {decls[:2], Binds{"time": &n}},
		"bool as value": {decls[1:2], Binds{"udp": &n}},
		"value as bool": {decls[:1], Binds{"time": &b}},
		"no help":       {[]Flag{{Name: "x", Kind: Int}}, Binds{"x": &n}},
		"shared bound":  {decls[3:], Binds{"db": new(string)}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered", name)
				}
			}()
			Register(pflag.NewFlagSet("x", pflag.ContinueOnError), c.decls, c.binds)
		}()
	}
}
