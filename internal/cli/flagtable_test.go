package cli

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// helpTexts are the tools' own --help outputs, each file headed by "# "
// lines naming the version and the command that produced it, and the
// heading of docs/cli.md's table that answers for the tool.
var helpTexts = []struct{ file, table string }{
	{"iperf3-3.12.txt", "### iperf3"},
	{"iperf3-3.21.txt", "### iperf3"},
	{"iperf-2.1.8.txt", "### iperf 2"},
}

// helpOption is the option column of a help line: an optional short flag,
// then an optional long one ("-p, --port", "--bidir", "-1, --one-off").
var helpOption = regexp.MustCompile(`^(-[A-Za-z0-9])?(?:,\s*)?(--[A-Za-z0-9][A-Za-z0-9_-]*)?`)

// helpFlags are the flags a help text declares: the short and long names
// at the start of each line that starts with a dash.
func helpFlags(text string) []string {
	var flags []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		m := helpOption.FindStringSubmatch(strings.TrimSpace(line))
		for _, f := range m[1:] {
			if f != "" {
				flags = append(flags, f)
			}
		}
	}
	return flags
}

type flagRow struct {
	theirs, ours      []string // the backquoted names in the first two cells
	status, note, raw string
}

var backquoted = regexp.MustCompile("`([^`]+)`")

func quotedIn(cell string) []string {
	var out []string
	for _, m := range backquoted.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

// flagTable reads the rows of the table under heading in docs/cli.md's
// "Every iperf and iperf3 flag" section.
func flagTable(t *testing.T, doc, heading string) []flagRow {
	t.Helper()
	_, section, ok := strings.Cut(doc, "\n## Every iperf and iperf3 flag\n")
	if !ok {
		t.Fatal(`docs/cli.md has no "## Every iperf and iperf3 flag" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, part, ok := strings.Cut(section, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("docs/cli.md's flag table has no %q part", heading)
	}
	part, _, _ = strings.Cut(part, "\n### ")
	var rows []flagRow
	for _, line := range strings.Split(part, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 4 {
			t.Errorf("flag table row without 4 cells: %s", line)
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, flagRow{theirs: quotedIn(cells[0]), ours: quotedIn(cells[1]),
			status: cells[2], note: cells[3], raw: line})
	}
	return rows
}

// TestFlagTable checks docs/cli.md's table of iperf's and iperf3's flags
// against both tools' help output: every flag they declare has a row, every
// row is one of theirs, and a row marked implemented names flags and
// commands that wireperf has.
func TestFlagTable(t *testing.T) {
	docBytes, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(docBytes)
	declared := map[string]map[string]bool{} // table → flags the tools declare
	for _, h := range helpTexts {
		text, err := os.ReadFile(filepath.Join("testdata", "helptexts", h.file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(text), "# iperf") || !strings.Contains(string(text), "# produced by: ") {
			t.Errorf("%s: want a header naming the version and the command that produced it", h.file)
		}
		flags := helpFlags(string(text))
		if len(flags) < 60 {
			t.Fatalf("%s: read %d flags; the help parser misses most of them", h.file, len(flags))
		}
		if declared[h.table] == nil {
			declared[h.table] = map[string]bool{}
		}
		rows := map[string]bool{}
		for _, r := range flagTable(t, doc, h.table) {
			for _, f := range r.theirs {
				rows[f] = true
			}
		}
		for _, f := range flags {
			declared[h.table][f] = true
			if !rows[f] {
				t.Errorf("%s declares %s: docs/cli.md's %q table has no row for it", h.file, f, h.table)
			}
		}
	}

	root := newRoot(env{stdout: io.Discard, stderr: io.Discard})
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	var ourFlags []*pflag.FlagSet
	ourFlags = append(ourFlags, root.Flags())
	for _, name := range []string{"client", "server"} {
		c, _, err := root.Find([]string{name})
		if err != nil || c.Name() != name {
			t.Fatalf("no %s command: %v", name, err)
		}
		c.InitDefaultHelpFlag()
		ourFlags = append(ourFlags, c.Flags(), c.InheritedFlags())
	}
	isOurs := func(name string) bool {
		for _, fs := range ourFlags {
			if long, ok := strings.CutPrefix(name, "--"); ok && fs.Lookup(long) != nil {
				return true
			}
			if short, ok := strings.CutPrefix(name, "-"); ok && len(short) == 1 && fs.ShorthandLookup(short) != nil {
				return true
			}
		}
		// -s and -c are iperf's spellings of the server and client commands.
		mode := iperfStyle([]string{name, "host"})
		return mode[0] == "server" || mode[0] == "client"
	}
	for table, flags := range declared {
		for _, r := range flagTable(t, doc, table) {
			if len(r.theirs) == 0 {
				t.Errorf("%s row names no flag of theirs: %s", table, r.raw)
			}
			for _, f := range r.theirs {
				if !flags[f] {
					t.Errorf("%s row for %s: no help text declares it", table, f)
				}
			}
			switch r.status {
			case "implemented":
				if len(r.ours) == 0 {
					t.Errorf("%s row marked implemented names no wireperf flag or command: %s", table, r.raw)
				}
				for _, o := range r.ours {
					if cmdPath, ok := strings.CutPrefix(o, "wireperf "); ok {
						if !hasCommand(root, strings.Fields(cmdPath)) {
							t.Errorf("%s row %v: wireperf has no command %q", table, r.theirs, o)
						}
					} else if !isOurs(o) {
						t.Errorf("%s row %v: neither wireperf's client nor its server has the flag %s", table, r.theirs, o)
					}
				}
			case "refused":
				if r.note == "" {
					t.Errorf("%s row %v is %s without a reason", table, r.theirs, r.status)
				}
			default:
				t.Errorf("%s row %v: status %q, want implemented or refused", table, r.theirs, r.status)
			}
		}
	}
}

func hasCommand(root *cobra.Command, path []string) bool {
	c, rest, err := root.Find(path)
	return err == nil && len(rest) == 0 && c != root
}
