// Package authflags is the key and TLS flags of the commands that connect
// to a server or serve one: it reads the key files, address lists and
// certificates they name into what a client, a server or an agent is
// configured with. Every error it returns names the flag and is fixed on
// the command line.
package authflags

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/agent"
	"github.com/wireperf/wireperf/internal/auth"
)

// Client is a client's key and TLS flags: every command that connects to
// a server takes the same ones.
type Client struct {
	KeyFile string // --auth-key-file
	TLSCA   string // --tls-ca
	TLSPin  string // --tls-pin
}

// Register adds the flags to fs.
func (c *Client) Register(fs *pflag.FlagSet) {
	fs.StringVar(&c.KeyFile, "auth-key-file", "", "prove to the server that you hold a key: a file whose first line is \"name key\" (mode 600)")
	fs.StringVar(&c.TLSCA, "tls-ca", "", "TLS on the control connection; trust the server's certificate if this CA file signed it")
	fs.StringVar(&c.TLSPin, "tls-pin", "", "TLS on the control connection; trust the server's certificate if its SHA-256 is this (hex)")
}

// Load reads the key file, if any, and builds the TLS settings for a
// connection to host, if any.
func (c *Client) Load(host string) (*auth.Credential, *tls.Config, error) {
	var cred *auth.Credential
	if c.KeyFile != "" {
		var err error
		if cred, err = auth.LoadCredential(c.KeyFile); err != nil {
			return nil, nil, err
		}
	}
	tc, err := c.TLSConfig(host)
	if err != nil {
		return nil, nil, err
	}
	return cred, tc, nil
}

// TLSConfig builds the client's TLS settings, or nil without TLS flags.
func (c *Client) TLSConfig(host string) (*tls.Config, error) {
	switch {
	case c.TLSCA != "" && c.TLSPin != "":
		return nil, errors.New("--tls-ca and --tls-pin: choose one")
	case c.TLSCA != "":
		pem, err := os.ReadFile(c.TLSCA)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s: no PEM certificate in it", c.TLSCA)
		}
		return &tls.Config{RootCAs: pool, ServerName: host, MinVersion: tls.VersionTLS13}, nil
	case c.TLSPin != "":
		pin, err := hex.DecodeString(strings.ReplaceAll(c.TLSPin, ":", ""))
		if err != nil || len(pin) != sha256.Size {
			return nil, errors.New("--tls-pin: want the certificate's SHA-256 in hex (64 digits)")
		}
		return &tls.Config{
			MinVersion: tls.VersionTLS13,
			// The pin replaces the chain: the certificate itself is checked.
			InsecureSkipVerify: true,
			VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
				if len(raw) == 0 {
					return errors.New("the server sent no certificate")
				}
				sum := sha256.Sum256(raw[0])
				if string(sum[:]) != string(pin) {
					return fmt.Errorf("the server's certificate has SHA-256 %x, not the pinned one", sum)
				}
				return nil
			},
		}, nil
	}
	return nil, nil
}

// Server is a server's keys, address lists and TLS flags (the daemon
// reads the same settings from its configuration file).
type Server struct {
	KeyFile    string   // --auth-key-file
	Iperf3Open bool     // --iperf3-open
	Allow      []string // --allow
	Deny       []string // --deny
	TLSCert    string   // --tls-cert
	TLSKey     string   // --tls-key
}

// Register adds the flags to fs.
func (s *Server) Register(fs *pflag.FlagSet) {
	fs.StringVar(&s.KeyFile, "auth-key-file", "", "admit only clients that prove they hold a key: a file of \"name key\" lines (mode 600)")
	fs.BoolVar(&s.Iperf3Open, "iperf3-open", false, "with --auth-key-file, still admit iperf3 clients (they cannot present a key)")
	fs.StringArrayVar(&s.Allow, "allow", nil, "admit clients from this CIDR prefix only (repeatable)")
	fs.StringArrayVar(&s.Deny, "deny", nil, "refuse clients from this CIDR prefix (repeatable; wins over --allow)")
	fs.StringVar(&s.TLSCert, "tls-cert", "", "require TLS on control connections, with this certificate (PEM)")
	fs.StringVar(&s.TLSKey, "tls-key", "", "the private key of --tls-cert (PEM)")
}

// Load reads the key file and the certificate and parses the lists; an
// error names the one that is wrong.
func (s *Server) Load() (keys auth.Keys, acl auth.ACL, tc *tls.Config, err error) {
	if s.KeyFile != "" {
		if keys, err = auth.LoadKeys(s.KeyFile); err != nil {
			return nil, acl, nil, err
		}
	}
	for _, a := range s.Allow {
		p, err := auth.ParsePrefix(a)
		if err != nil {
			return nil, acl, nil, fmt.Errorf("--allow: %v", err)
		}
		acl.Allow = append(acl.Allow, p)
	}
	for _, d := range s.Deny {
		p, err := auth.ParsePrefix(d)
		if err != nil {
			return nil, acl, nil, fmt.Errorf("--deny: %v", err)
		}
		acl.Deny = append(acl.Deny, p)
	}
	if (s.TLSCert == "") != (s.TLSKey == "") {
		return nil, acl, nil, errors.New("--tls-cert and --tls-key go together")
	}
	if s.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(s.TLSCert, s.TLSKey)
		if err != nil {
			return nil, acl, nil, fmt.Errorf("--tls-cert %s / --tls-key %s: %v", s.TLSCert, s.TLSKey, err)
		}
		tc = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	}
	return keys, acl, tc, nil
}

// Agent is a server's agent role (wireperf group): whether it has one,
// the controllers' keys, and the key it proves to receivers.
type Agent struct {
	On            bool   // --agent
	KeyFile       string // --agent-key-file
	ClientKeyFile string // --client-key-file
}

// Register adds the flags to fs.
func (a *Agent) Register(fs *pflag.FlagSet) {
	fs.BoolVar(&a.On, "agent", false, "also run client tests for a group controller that holds a key of --agent-key-file (wireperf group)")
	fs.StringVar(&a.KeyFile, "agent-key-file", "", "with --agent: the keys of the controllers it serves, a file of \"name key\" lines (mode 600)")
	fs.StringVar(&a.ClientKeyFile, "client-key-file", "", "with --agent: the key it proves to receivers that require one (--auth-key-file on their server), a file whose first \"name key\" line is used (mode 600)")
}

// Load is the agent role the flags describe, or nil without --agent.
func (a *Agent) Load() (*agent.Agent, error) {
	switch {
	case !a.On && a.KeyFile != "":
		return nil, errors.New("--agent-key-file needs --agent")
	case !a.On && a.ClientKeyFile != "":
		return nil, errors.New("--client-key-file needs --agent")
	case !a.On:
		return nil, nil
	case a.KeyFile == "":
		return nil, errors.New("--agent needs --agent-key-file: an agent only serves controllers that hold a key")
	}
	keys, err := auth.LoadKeys(a.KeyFile)
	if err != nil {
		return nil, err
	}
	ag := &agent.Agent{Keys: keys}
	if a.ClientKeyFile != "" {
		if ag.ClientCred, err = auth.LoadCredential(a.ClientKeyFile); err != nil {
			return nil, fmt.Errorf("--client-key-file: %w", err)
		}
	}
	return ag, nil
}
