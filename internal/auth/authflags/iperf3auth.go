package authflags

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/wireperf/wireperf/internal/iperf3"
)

// PasswordEnv is where iperf3's client, and ours, read the password of
// --username from.
const PasswordEnv = "IPERF3_PASSWORD"

// Iperf3Client is iperf3's credentials flags of the client: what it
// proves to an iperf3 server that requires them. Between wireperf
// hosts, --auth-key-file is the way (docs/security.md).
type Iperf3Client struct {
	User      string // --username
	PublicKey string // --rsa-public-key-path
	PKCS1     bool   // --use-pkcs1-padding
	// getenv and terminal stand in for the environment and the terminal
	// in tests; nil means the process's.
	getenv   func(string) string
	terminal func() (password []byte, err error)
}

// Register adds the flags to fs.
func (c *Iperf3Client) Register(fs *pflag.FlagSet) {
	fs.StringVar(&c.User, "username", "", "against an iperf3 server that requires it: the user of iperf3's authentication; the password comes from $"+PasswordEnv+" or is asked for on the terminal")
	fs.StringVar(&c.PublicKey, "rsa-public-key-path", "", "with --username: the iperf3 server's RSA public key (PEM), which encrypts the credentials")
	fs.BoolVar(&c.PKCS1, "use-pkcs1-padding", false, "with --username: encrypt with PKCS#1 v1.5 padding instead of OAEP (iperf3 servers before 3.17, or one run with it)")
}

// Load reads the key and the password, or returns nil without
// --username. The password is $IPERF3_PASSWORD, else asked for without
// echo when stdin is a terminal, as iperf3 does.
func (c *Iperf3Client) Load() (*iperf3.Credentials, error) {
	if c.User == "" && c.PublicKey == "" && !c.PKCS1 {
		return nil, nil
	}
	return c.Credentials(func() (string, error) {
		getenv := c.getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		if password := getenv(PasswordEnv); password != "" {
			return password, nil
		}
		ask := c.terminal
		if ask == nil {
			ask = askPassword
		}
		b, err := ask()
		if err != nil {
			return "", err
		}
		defer clear(b)
		return strings.TrimRight(string(b), "\r\n"), nil
	})
}

// Credentials checks the flags, reads the key, then takes the password
// from password (the command line's environment or terminal, or the
// daemon's password file), and checks the whole as iperf3's token must
// carry it. Its errors name the flags and never show the password.
func (c *Iperf3Client) Credentials(password func() (string, error)) (*iperf3.Credentials, error) {
	if c.User == "" || c.PublicKey == "" {
		return nil, errors.New("--username and --rsa-public-key-path go together (iperf3's authentication)")
	}
	key, err := iperf3.LoadPublicKey(c.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("--rsa-public-key-path: %v", err)
	}
	pw, err := password()
	if err != nil {
		return nil, fmt.Errorf("--username: %v", err)
	}
	cred := &iperf3.Credentials{User: c.User, Password: pw, Key: key, PKCS1: c.PKCS1}
	if err := cred.Check(); err != nil {
		return nil, fmt.Errorf("--username: %v", err)
	}
	return cred, nil
}

// askPassword reads a line from the terminal without echo.
func askPassword() ([]byte, error) {
	fd := int(os.Stdin.Fd())
	if !term.IsTerminal(fd) {
		return nil, fmt.Errorf("no password: set %s, or run on a terminal to be asked", PasswordEnv)
	}
	// The prompt goes to stderr: stdout may be a report (-J).
	_, _ = io.WriteString(os.Stderr, "Password: ")
	b, err := term.ReadPassword(fd)
	_, _ = io.WriteString(os.Stderr, "\n")
	if err != nil {
		return nil, fmt.Errorf("reading the password: %v", err)
	}
	return b, nil
}

// Iperf3Server is iperf3's credentials flags of the server: which
// iperf3 clients it admits. A server with --auth-key-file too serves
// both kinds of client, each proving itself its own way.
type Iperf3Server struct {
	PrivateKey string        // --rsa-private-key-path
	Users      string        // --authorized-users-path
	Skew       time.Duration // --time-skew-threshold
	PKCS1      bool          // --use-pkcs1-padding
}

// Register adds the flags to fs.
func (s *Iperf3Server) Register(fs *pflag.FlagSet) {
	fs.StringVar(&s.PrivateKey, "rsa-private-key-path", "", "admit only iperf3 clients with iperf3's credentials: the RSA private key (PEM, unencrypted) that decrypts them")
	fs.StringVar(&s.Users, "authorized-users-path", "", "with --rsa-private-key-path: the users file, \"user,sha256 of {user}password in hex\" lines (read at each attempt)")
	fs.Var(skewSeconds{&s.Skew}, "time-skew-threshold", "with --rsa-private-key-path: how far an iperf3 client's clock may be from ours, in seconds, as iperf3's")
	fs.BoolVar(&s.PKCS1, "use-pkcs1-padding", false, "with --rsa-private-key-path: iperf3 clients pad with PKCS#1 v1.5 instead of OAEP (iperf3 before 3.17)")
}

// Load reads the key and checks the users file, or returns nil without
// the flags.
func (s *Iperf3Server) Load() (*iperf3.ServerAuth, error) {
	switch {
	case s.PrivateKey == "" && s.Users == "" && s.Skew == 0 && !s.PKCS1:
		return nil, nil
	case s.PrivateKey == "" || s.Users == "":
		return nil, errors.New("--rsa-private-key-path and --authorized-users-path go together (iperf3's authentication)")
	}
	key, err := iperf3.LoadPrivateKey(s.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("--rsa-private-key-path: %v", err)
	}
	if _, err := iperf3.LoadUsers(s.Users); err != nil {
		return nil, fmt.Errorf("--authorized-users-path: %v", err)
	}
	skew := s.Skew
	if skew == 0 {
		skew = iperf3.DefaultSkewThreshold
	}
	return &iperf3.ServerAuth{Key: key, UsersPath: s.Users, Skew: skew, PKCS1: s.PKCS1}, nil
}

// skewSeconds is --time-skew-threshold: whole seconds, more than 0, as
// iperf3 takes it.
type skewSeconds struct{ d *time.Duration }

func (s skewSeconds) String() string {
	if s.d == nil || *s.d == 0 {
		return "10"
	}
	return fmt.Sprint(int64(*s.d / time.Second))
}

func (s skewSeconds) Set(v string) error {
	var n int64
	if _, err := fmt.Sscan(v, &n); err != nil || fmt.Sprint(n) != strings.TrimPrefix(v, "+") || n <= 0 || n > 1<<31-1 {
		return errors.New("want whole seconds, more than 0 (iperf3's \"skew threshold must be a positive number\")")
	}
	*s.d = time.Duration(n) * time.Second
	return nil
}

func (skewSeconds) Type() string { return "seconds" }
