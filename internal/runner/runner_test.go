package runner

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/testutil/loopserver"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func parse(t *testing.T, kind measure.Kind, args ...string) measure.Test {
	t.Helper()
	tt, _, err := measure.Parse(kind, args)
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

// A described client test and an rr test run against a loopback server,
// and their -J documents say what was measured.
func TestJSONRunsTheDescribedTest(t *testing.T) {
	port := loopserver.Start(t).Addr().Port
	p := "--port=" + itoa(port)
	doc, err := JSON(context.Background(), parse(t, measure.KindClient, p, "-t", "0.5", "-i", "0", "-b", "50m", "-u"), "127.0.0.1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		End struct {
			Sum struct {
				Bytes   int64 `json:"bytes"`
				Packets int64 `json:"packets"`
			} `json:"sum"`
		} `json:"end"`
	}
	if err := json.Unmarshal(doc, &c); err != nil || c.End.Sum.Packets == 0 {
		t.Fatalf("client document: %v, %+v", err, c)
	}
	doc, err = JSON(context.Background(), parse(t, measure.KindRR, p, "--count", "50", "--sizes", "64,128"), "127.0.0.1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), `"kind": "rr"`) || strings.Count(string(doc), `"request_size"`) < 2 {
		t.Fatalf("rr document lacks its two sizes: %.300s", doc)
	}
	if _, err := JSON(context.Background(), parse(t, measure.KindUDPMon), "127.0.0.1", Options{}); err == nil {
		t.Fatal("a udpmon sweep run as one test")
	}
}

// A server that is not there fails the test with the dial's error.
func TestClientRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	tt := parse(t, measure.KindClient, "--port="+itoa(port), "-t", "0.2", "--connect-timeout", "1s")
	if _, err := Client(context.Background(), tt.Client, "127.0.0.1", Options{}); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("a test against a closed port: %v", err)
	}
}

var itoa = strconv.Itoa
