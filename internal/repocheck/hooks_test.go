package repocheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// funcFieldKind says why a struct field of function type is there. A
// lower package must not reach a higher one through a function the
// higher one fills in: that is an import upward in disguise. Every other
// use is one of these.
type funcFieldKind string

const (
	// observer: the package tells its caller something (progress, a
	// result, a sample) and needs nothing back.
	observer funcFieldKind = "observer"
	// seam: the package has its own behaviour; the field replaces it in
	// tests (a clock, a goroutine starter, a fake network).
	seam funcFieldKind = "seam"
	// port: the owner of a resource the package uses provides it (the
	// server's admission and slots, a frame's size limits) or the
	// command picks the output format, which no server or data plane
	// imports.
	port funcFieldKind = "port"
	// gate: the caller decides when something may go on (a group's
	// common start instant).
	gate funcFieldKind = "gate"
)

// funcFields are every exported function-typed struct field under
// internal/, with why it is there. A hook (a function through which a
// lower package calls code that only a higher package provides) is none
// of these, and has no place in the list.
var funcFields = map[string]funcFieldKind{
	"agent.Agent.Admit":                 port,     // the server's admission of a test the agent runs
	"agent.Agent.AuthFailed":            observer, // a wrong key, for the server's rate-limited log
	"campaign.Executor.Begin":           observer,
	"campaign.Executor.Done":            observer,
	"campaign.Recorder.Notice":          observer,
	"campaign.Executor.Run":             seam, // default: Recorder.Record
	"campaign.Executor.Sleep":           seam,
	"daemon.Config.RunTest":             seam, // default: the test as a child process of Config.Binary
	"group.Config.OnStart":              observer,
	"guide.Config.Progress":             observer,
	"iperf3.ServeConfig.Admit":          port,
	"iperf3.ServeConfig.Meter":          port, // the server's caps on rates and bytes, read as the test runs
	"iperf3.ServeConfig.ServerOutput":   port, // the format the server's command picked
	"lab.RouterConfig.Logf":             observer,
	"mcastrun.Server.Joined":            observer, // -D's notice that the receiver serves
	"labtest.Host.Command":              seam,
	"proto.Framing.MaxBody":             port,
	"rrcontrol.Config.Phase":            observer, // the phase a probe belongs to, read from its load's owner
	"rrcontrol.Config.Started":          observer,
	"rrcontrol.Config.OnSample":         observer, // each counted transaction, for rrul's latency series
	"rr.ProberConfig.OnSample":          observer, // the same, from the prober
	"rrload.Config.Go":                  seam,
	"rrul.Config.Go":                    seam, // as rrload's: a lab test enters its namespace first
	"server.Config.OnResult":            observer,
	"server.Config.OnTest":              observer, // each finished test, for the server's own report
	"server.Config.ServerOutput":        port,
	"server.Config.Live":                observer, // each test as it runs, for the server's live rows
	"control.ServeConfig.ServerOutput":  port,     // the format the server's command picked
	"emit.LineWriter.Now":               seam,     // default: time.Now
	"control.Admission.Concurrent":      port,
	"control.Admission.Release":         port,
	"control.Admission.Meter":           port, // the server's caps on rates and bytes, read as the test runs
	"session.ClientConfig.StartGate":    gate,
	"control.ServeConfig.HandshakeDone": observer,
	"tcpinfo.SamplerConfig.OnSample":    observer,
	"runner.Options.Notice":             observer,
	"udpmonrun.Config.OnPoint":          observer,
	"udpmonrun.Config.Run":              seam, // default: session.RunClient over Config.Client
	"udpmonrun.Config.Router":           port, // a lab router's counters, from the command that runs through the lab (lab imports udpmon in its tests)
	"agenttest.Server.Kill":             seam,
}

// TestNoHooks lists every exported function-typed field of a struct under
// internal/ and fails on one that is not classified above: a new one must
// say why it is not a hook. It also fails on entries that no longer
// exist, so the list stays the truth.
func TestNoHooks(t *testing.T) {
	root := repoRoot(t)
	found := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok || !ts.Name.IsExported() {
					continue
				}
				for _, field := range st.Fields.List {
					if _, ok := field.Type.(*ast.FuncType); !ok {
						continue
					}
					for _, n := range field.Names {
						if n.IsExported() {
							found[f.Name.Name+"."+ts.Name.Name+"."+n.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var unclassified, gone []string
	for name := range found {
		if _, ok := funcFields[name]; !ok {
			unclassified = append(unclassified, name)
		}
	}
	for name := range funcFields {
		if !found[name] {
			gone = append(gone, name)
		}
	}
	sort.Strings(unclassified)
	sort.Strings(gone)
	for _, name := range unclassified {
		t.Errorf("%s: a function-typed field that is neither an observer, a seam, a port nor a gate: if a higher package fills it for a lower one to call, it is a hook; import the other way, or classify it in funcFields with the reason", name)
	}
	for _, name := range gone {
		t.Errorf("%s: listed in funcFields but no longer a field", name)
	}
	t.Logf("%d function-typed fields, every one classified; hooks: none", len(found))
}
