package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/testutil/loopback"
	"github.com/wireperf/wireperf/internal/testutil/loopserver"
)

// clientFlags parses a client command line.
func clientFlags(t *testing.T, args ...string) *measure.Client {
	t.Helper()
	c, fs := measure.NewClient(), pflag.NewFlagSet("client", pflag.ContinueOnError)
	c.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := c.Finish(fs); err != nil {
		t.Fatal(err)
	}
	return c
}

// A selftest serves itself on loopback: every byte sent arrives, the
// summary is reported, both ends are one process, and the bottleneck
// asked for is on the result.
func TestSelfTest(t *testing.T) {
	c := clientFlags(t, "-t", "0.3", "-i", "0", "--bottleneck", "1g")
	var out bytes.Buffer
	csv := filepath.Join(t.TempDir(), "timeline.csv")
	res, err := SelfTest(context.Background(), c, &emit.JSON{W: &out}, csv)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Local.OneProcess || !res.Remote.OneProcess || res.Local.BottleneckBps != 1e9 {
		t.Fatalf("local %+v", res.Local)
	}
	for _, d := range res.Directions() {
		if d.Sent.Bytes == 0 || d.Sent.Bytes != d.Received.Bytes {
			t.Fatalf("%s: sent %d, received %d", d.Label(), d.Sent.Bytes, d.Received.Bytes)
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc["end"] == nil {
		t.Fatalf("the -J summary: %v\n%s", err, out.String())
	}
	if data, err := os.ReadFile(csv); err != nil || len(data) == 0 {
		t.Fatalf("the TCP_INFO CSV: %v, %d bytes", err, len(data))
	}
}

func TestApplyTCPInfo(t *testing.T) {
	if err := ApplyTCPInfo(nil, 1e9, "/nonexistent/x.csv"); err != nil {
		t.Fatalf("no result: %v", err)
	}
	res := &result.Result{}
	if err := ApplyTCPInfo(res, 0, ""); err != nil || res.Local.BottleneckBps != 0 {
		t.Fatalf("nothing asked: %v, bottleneck %v", err, res.Local.BottleneckBps)
	}
	err := ApplyTCPInfo(res, 5e8, filepath.Join(t.TempDir(), "no", "such", "dir.csv"))
	if err == nil || !strings.HasPrefix(err.Error(), "--tcpinfo-csv: ") || res.Local.BottleneckBps != 5e8 {
		t.Fatalf("an unwritable CSV: %v, bottleneck %v", err, res.Local.BottleneckBps)
	}
}

// udpmonFlags parses a udpmon command line.
func udpmonFlags(t *testing.T, args ...string) *measure.UDPMon {
	t.Helper()
	u, fs := measure.NewUDPMon(), pflag.NewFlagSet("udpmon", pflag.ContinueOnError)
	u.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := u.Finish(); err != nil {
		t.Fatal(err)
	}
	return u
}

// A UDPmon sweep reports each point, as a table or as one document.
func TestUDPMonReports(t *testing.T) {
	port := strconv.Itoa(loopserver.Start(t).Addr().Port)
	u := udpmonFlags(t, "-p", port, "--sizes", "512", "--spacing", "0,10", "--count", "200")
	var out bytes.Buffer
	sw, err := UDPMon(context.Background(), u, "127.0.0.1", Options{}, &out, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Points) != 2 || !strings.Contains(out.String(), "\n2 points in ") || strings.Contains(out.String(), "\r") {
		t.Fatalf("%d points; the table:\n%s", len(sw.Points), out.String())
	}
	u = udpmonFlags(t, "-p", port, "--sizes", "512", "--spacing", "10", "--count", "200", "-J")
	out.Reset()
	if _, err := UDPMon(context.Background(), u, "127.0.0.1", Options{}, &out, false); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Kind  string
		Sweep struct{ Points []struct{ Size int } }
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Kind != "udpmon" || len(doc.Sweep.Points) != 1 || doc.Sweep.Points[0].Size != 512 {
		t.Fatalf("-J: %v\n%s", err, out.String())
	}
}

// A sweep that cannot start returns no sweep, the error, and prints
// nothing.
func TestUDPMonCannotStart(t *testing.T) {
	u := udpmonFlags(t, "-p", strconv.Itoa(loopback.FreePort(t)), "--sizes", "512", "--spacing", "0", "--count", "10", "--connect-timeout", "1s")
	var out bytes.Buffer
	sw, err := UDPMon(context.Background(), u, "127.0.0.1", Options{}, &out, false)
	if sw != nil || err == nil || out.Len() != 0 {
		t.Fatalf("sweep %v, err %v, printed %q", sw, err, out.String())
	}
}
