package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A sampled group of 1,000 hosts (every host probing 4 partners every
// minute and testing its throughput to 1 every 10 minutes) is applied:
// 5 rotating tasks a host, not one a pair, each host busy 4% of the time
// with the throughput tests; applied again, nothing changes. (A full
// mesh of 50 hosts is still refused: TestMeshApplyRefusesAnOverfullMesh.)
func TestMeshApplySampledThousand(t *testing.T) {
	// Computes for half a minute under the race detector, beside
	// TestProbesAsNobodyInLab, which mostly waits (retransmits, timeouts).
	t.Parallel()
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
	// Applying it again changes nothing: the archive's tests show that on
	// both backends (TestRotatingTaskRoundTrip), at the cost here of another
	// 25 s under the race detector.
	code, out, _ = runCLI("mesh", "apply", f, "--dry-run")
	if code != ExitOK || !strings.Contains(out, "\nutilisation of each host by exclusive runs (busy time ÷ period), worst first:\nh0000 4.0%: 2 runs of measured/throughput every 10m0s") {
		t.Fatalf("dry run: %d %q", code, out[max(0, len(out)-400):])
	}
	// A task per host and slot, each listed with its first destination
	// and how many follow it (248 in a host's last probe slot: 999 is not
	// a multiple of 4), repeating once a rotation (250 minutes for
	// the probes, 999 periods of 10 minutes for the throughput tests).
	probes := regexp.MustCompile(`(?m)^t[0-9a-f]{12} latency h\d{4} → h\d{4} \+24[89] in turn every 4h10m0s$`).FindAllString(out, -1)
	tputs := regexp.MustCompile(`(?m)^t[0-9a-f]{12} throughput h\d{4} → h\d{4} \+998 in turn every 166h30m0s$`).FindAllString(out, -1)
	if len(probes) != 4000 || len(tputs) != 1000 {
		t.Fatalf("dry run: %d probe tasks and %d throughput tasks listed, want 4000 and 1000:\n%s", len(probes), len(tputs), out[:400])
	}
}
