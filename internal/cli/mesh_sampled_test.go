package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A sampled group of 1,000 hosts (every host probing 4 partners every
// minute and testing its throughput to 1 every 10 minutes) is applied:
// 5 rotating tasks a host, not one a pair, each host busy 4% of the time
// with the throughput tests; applied again, nothing changes. (A full
// mesh of 50 hosts is still refused: TestMeshApplyRefusesAnOverfullMesh.)
func TestMeshApplySampledThousand(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: stores 5,000 tasks of 1,000 destinations each")
	}
	var b strings.Builder
	b.WriteString("name: thousand\nhosts:\n")
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("h%04d", i)
		fmt.Fprintf(&b, "  %s:\n", names[i])
	}
	list := "[" + strings.Join(names, ", ") + "]"
	fmt.Fprintf(&b, "groups:\n  probed: {sampled: {hosts: %s, partners: 4}}\n  measured: {sampled: {hosts: [probed], partners: 1}}\n", list)
	b.WriteString(`tests:
  latency: {test: rr -t 5, class: background}
  throughput: {test: client -t 10}
schedules:
  - {group: probed, test: latency, repeat: 1m}
  - {group: measured, test: throughput, repeat: 10m}
`)
	f := filepath.Join(t.TempDir(), "thousand.yaml")
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "a.db")
	code, out, errOut := runCLI("mesh", "apply", f, "--db", db)
	if code != ExitOK || errOut != "" || out != "mesh thousand: 5000 tasks: 5000 added, 0 updated, 0 unchanged, 0 removed\n" {
		t.Fatalf("%d %q %q", code, out, errOut)
	}
	code, out, _ = runCLI("mesh", "apply", f, "--db", db)
	if code != ExitOK || out != "mesh thousand: 5000 tasks: 0 added, 0 updated, 5000 unchanged, 0 removed\n" {
		t.Fatalf("again: %d %q", code, out)
	}
	code, out, _ = runCLI("mesh", "apply", f, "--dry-run")
	if code != ExitOK || !strings.Contains(out, "\nutilisation of each host by exclusive runs (busy time ÷ period), worst first:\nh0000 4.0%: 2 runs of measured/throughput every 10m0s") {
		t.Fatalf("dry run: %d %q", code, out[max(0, len(out)-400):])
	}
}
