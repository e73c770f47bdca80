// Package agenttest starts wireperf servers, with or without the agent
// role, on loopback for tests of agents and group tests.
package agenttest

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/agent"
	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/server"
)

// Key is the test controllers' key.
var Key = auth.Credential{User: "ctl", Key: []byte("7d3f91c2a85e40b6f1e29d7c4a0b8e53")}

// Keys holds Key.
func Keys() auth.Keys { return auth.Keys{Key.User: Key.Key} }

// Server is a running server on 127.0.0.1.
type Server struct {
	*server.Server
	// Kill stops the server at once, aborting its running tests, as a
	// receiver that dies mid-test.
	Kill func()
}

// HostPort is the server's address as host:port.
func (s Server) HostPort() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Addr().Port))
}

// Settled returns the server's counters once no test runs on it: a
// test's client can be done before the server has closed its side and
// counted it.
func (s Server) Settled(t testing.TB) server.Stats {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := s.Stats()
		if st.Running == 0 {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("a test still runs on the server 10 s on: %+v", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Start serves on a free loopback port until the test ends; keys, when
// set, make it an agent with those controller keys.
func Start(t testing.TB, keys auth.Keys) Server {
	t.Helper()
	return StartWith(t, Options{AgentKeys: keys})
}

// Options are a test server's roles and keys.
type Options struct {
	// AgentKeys, when set, make the server an agent with those
	// controller keys.
	AgentKeys auth.Keys
	// ClientCred is the key the agent proves to receivers.
	ClientCred *auth.Credential
	// Keys, when set, make the server require a key of its clients
	// (--auth-key-file).
	Keys auth.Keys
}

// StartWith serves on a free loopback port until the test ends.
func StartWith(t testing.TB, o Options) Server {
	t.Helper()
	cfg := server.Config{
		Bind: "127.0.0.1", Limits: server.DefaultLimits(), HandshakeTimeout: 5 * time.Second,
		ShutdownGrace: time.Millisecond, Logger: slog.New(slog.DiscardHandler), Keys: o.Keys,
	}
	if o.AgentKeys != nil {
		cfg.Agent = &agent.Agent{Keys: o.AgentKeys, ClientCred: o.ClientCred, Timeout: 5 * time.Second, Logger: cfg.Logger}
	}
	srv := server.New(cfg)
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	var once sync.Once
	kill := func() {
		once.Do(func() {
			cancel()
			select {
			case <-served:
			case <-time.After(20 * time.Second):
				t.Error("server did not stop")
			}
		})
	}
	t.Cleanup(kill)
	return Server{Server: srv, Kill: kill}
}
