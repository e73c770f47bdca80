package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestJSONStreamFullOutputAndExtraData runs a real client with
// --json-stream --json-stream-full-output and a hostile --extra-data,
// saved: the output is the stream's lines and then one document whose
// end is the end event's, the string is in that document as given, and
// the archive's stored document has it too.
func TestJSONStreamFullOutputAndExtraData(t *testing.T) {
	port := startServer(t)
	db := filepath.Join(t.TempDir(), "a.db")
	extra := "quote\" brace} nl\n esc\x1b[2J end"
	code, out, stderr := runCLI("client", "127.0.0.1", "-p", strconv.Itoa(port), "-n", "8M", "-i", "0",
		"--json-stream", "--json-stream-full-output", "--extra-data", extra, "--save", "--db", db)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rd := bufio.NewReader(strings.NewReader(out))
	var end any
	for end == nil {
		line, err := rd.ReadBytes('\n')
		if err != nil {
			t.Fatalf("no end event: %v\n%s", err, out)
		}
		var ev map[string]any
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("stream line %q: %v", line, err)
		}
		if ev["event"] == "end" {
			end = ev["data"]
		}
	}
	var rest bytes.Buffer
	_, _ = rest.ReadFrom(rd)
	dec := json.NewDecoder(&rest)
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil || dec.More() {
		t.Fatalf("after the end event: %v (want one document)\n%s", err, out)
	}
	if !reflect.DeepEqual(doc["end"], end) {
		t.Errorf("the document's end differs from the end event's data")
	}
	sent := doc["end"].(map[string]any)["sum_sent"].(map[string]any)["bytes"]
	if sent != float64(8<<20) {
		t.Errorf("the document's sum_sent bytes %v, want 8 MiB", sent)
	}
	if doc["extra_data"] != extra {
		t.Errorf("extra_data %q, want %q", doc["extra_data"], extra)
	}
	if strings.Contains(out, "\x1b") {
		t.Error("an escape byte of --extra-data reached the output raw")
	}
	runs := listRuns(t, "--db", db)
	if len(runs) != 1 {
		t.Fatalf("%d runs stored", len(runs))
	}
	code, stored, stderr := runCLI("show", "--db", db, runs[0].ID, "-J")
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, stderr)
	}
	var sdoc map[string]any
	if err := json.Unmarshal([]byte(stored), &sdoc); err != nil || sdoc["extra_data"] != extra {
		t.Errorf("the stored document's extra_data %q (%v), want %q", sdoc["extra_data"], err, extra)
	}
}

// The new flags' mistakes are refused in one line, before any test.
func TestPayloadFlagsRefused(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--extra-data", strings.Repeat("x", 4097)}, "--extra-data: 4097 bytes, longer than 4096"},
		{[]string{"--json-stream-full-output"}, "--json-stream-full-output goes with --json-stream"},
		{[]string{"-J", "--json-stream-full-output"}, "--json-stream-full-output goes with --json-stream"},
		{[]string{"-u", "--skip-rx-copy"}, "--skip-rx-copy applies to TCP tests"},
		{[]string{"--skip-rx-copy", "--trip-times"}, "--skip-rx-copy and --trip-times: choose one"},
		{[]string{"--skip-rx-copy", "-R", "-F", "/dev/null"}, "--skip-rx-copy and -F: choose one"},
		{[]string{"--repeating-payload", "-Z"}, "--repeating-payload and -Z: choose one"},
	} {
		code, _, stderr := runCLI(append([]string{"client", "127.0.0.1", "-p", "9"}, tt.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want %d and one line with %q", tt.args[:min(len(tt.args), 3)], code, stderr, ExitUsage, tt.want)
		}
	}
}
