package cli

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

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/testrun"
)

// clientSecurity is a client's key and TLS flags.
type clientSecurity struct {
	keyFile string
	tlsCA   string
	tlsPin  string
}

func (c *clientSecurity) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.keyFile, "auth-key-file", "", "prove to the server that you hold a key: a file whose first line is \"name key\" (mode 600)")
	fs.StringVar(&c.tlsCA, "tls-ca", "", "TLS on the control connection; trust the server's certificate if this CA file signed it")
	fs.StringVar(&c.tlsPin, "tls-pin", "", "TLS on the control connection; trust the server's certificate if its SHA-256 is this (hex)")
}

// credential loads the key file, if any. A bad file is a usage error.
func (c *clientSecurity) credential() (*auth.Credential, error) {
	if c.keyFile == "" {
		return nil, nil
	}
	cred, err := auth.LoadCredential(c.keyFile)
	if err != nil {
		return nil, usageError{err}
	}
	return cred, nil
}

// apply puts the key and the TLS settings on a client's configuration:
// every command that connects to a server takes the same flags.
func (c *clientSecurity) apply(cfg *session.ClientConfig) error {
	cred, err := c.credential()
	if err != nil {
		return err
	}
	tc, err := c.tlsConfig(cfg.Host)
	if err != nil {
		return err
	}
	cfg.Auth, cfg.TLS = cred, tc
	return nil
}

// applyTo puts the key and the TLS settings on a test run's options.
func (c *clientSecurity) applyTo(o *testrun.Options, host string) error {
	cred, err := c.credential()
	if err != nil {
		return err
	}
	tc, err := c.tlsConfig(host)
	if err != nil {
		return err
	}
	o.Auth, o.TLS = cred, tc
	return nil
}

// tlsConfig builds the client's TLS settings, if any.
func (c *clientSecurity) tlsConfig(host string) (*tls.Config, error) {
	switch {
	case c.tlsCA != "" && c.tlsPin != "":
		return nil, usagef("--tls-ca and --tls-pin: choose one")
	case c.tlsCA != "":
		pem, err := os.ReadFile(c.tlsCA)
		if err != nil {
			return nil, usagef("--tls-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usagef("--tls-ca %s: no PEM certificate in it", c.tlsCA)
		}
		return &tls.Config{RootCAs: pool, ServerName: host, MinVersion: tls.VersionTLS13}, nil
	case c.tlsPin != "":
		pin, err := hex.DecodeString(strings.ReplaceAll(c.tlsPin, ":", ""))
		if err != nil || len(pin) != sha256.Size {
			return nil, usagef("--tls-pin: want the certificate's SHA-256 in hex (64 digits)")
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

// serverSecurity is a server's keys, address lists and TLS flags.
type serverSecurity struct {
	keyFile    string
	allow      []string
	deny       []string
	tlsCert    string
	tlsKey     string
	iperf3Open bool
}

func (s *serverSecurity) register(fs *pflag.FlagSet) {
	fs.StringVar(&s.keyFile, "auth-key-file", "", "admit only clients that prove they hold a key: a file of \"name key\" lines (mode 600)")
	fs.BoolVar(&s.iperf3Open, "iperf3-open", false, "with --auth-key-file, still admit iperf3 clients (they cannot present a key)")
	fs.StringArrayVar(&s.allow, "allow", nil, "admit clients from this CIDR prefix only (repeatable)")
	fs.StringArrayVar(&s.deny, "deny", nil, "refuse clients from this CIDR prefix (repeatable; wins over --allow)")
	fs.StringVar(&s.tlsCert, "tls-cert", "", "require TLS on control connections, with this certificate (PEM)")
	fs.StringVar(&s.tlsKey, "tls-key", "", "the private key of --tls-cert (PEM)")
}

// apply loads the files and parses the lists; a bad one is a usage error
// naming it.
func (s *serverSecurity) apply() (keys auth.Keys, acl auth.ACL, tc *tls.Config, err error) {
	if s.keyFile != "" {
		if keys, err = auth.LoadKeys(s.keyFile); err != nil {
			return nil, acl, nil, usageError{err}
		}
	}
	for _, a := range s.allow {
		p, err := auth.ParsePrefix(a)
		if err != nil {
			return nil, acl, nil, usagef("--allow: %v", err)
		}
		acl.Allow = append(acl.Allow, p)
	}
	for _, d := range s.deny {
		p, err := auth.ParsePrefix(d)
		if err != nil {
			return nil, acl, nil, usagef("--deny: %v", err)
		}
		acl.Deny = append(acl.Deny, p)
	}
	if (s.tlsCert == "") != (s.tlsKey == "") {
		return nil, acl, nil, usagef("--tls-cert and --tls-key go together")
	}
	if s.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(s.tlsCert, s.tlsKey)
		if err != nil {
			return nil, acl, nil, usagef("--tls-cert %s / --tls-key %s: %v", s.tlsCert, s.tlsKey, err)
		}
		tc = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	}
	return keys, acl, tc, nil
}
