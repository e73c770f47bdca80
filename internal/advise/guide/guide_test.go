package guide

import (
	"context"
	"net"
	"runtime"
	"testing"
	"time"
)

func TestProbeRTT(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	probes, info, err := ProbeRTT(context.Background(), ln.Addr().String(), "", 3, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(probes) != 3 {
		t.Fatalf("%d probes, want 3", len(probes))
	}
	for _, p := range probes {
		if p.RTTus == 0 && !p.Kernel {
			t.Errorf("probe %+v has no RTT", p)
		}
		if p.Kernel != (runtime.GOOS == "linux") {
			t.Errorf("probe %+v: kernel timing on %s should be %v", p, runtime.GOOS, runtime.GOOS == "linux")
		}
	}
	if info == nil || info.SndMSS == 0 {
		t.Errorf("no MSS from the probes: %+v", info)
	}
}

func TestProbeRTTRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if _, _, err := ProbeRTT(context.Background(), addr, "", 2, time.Second); err == nil {
		t.Error("probing a closed port succeeded")
	}
}

func TestRunRejectsBadSpec(t *testing.T) {
	if _, err := Run(context.Background(), Config{Host: "127.0.0.1", Port: 1, Congestion: "NOT VALID"}); err == nil {
		t.Error("a bad congestion name was accepted")
	}
}
