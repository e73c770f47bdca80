package daemon

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/auth/authflags"
	"github.com/wireperf/wireperf/internal/iperf3"
	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/testline"
)

// Iperf3Credential is one entry of the configuration's
// iperf3_credentials: what this host's scheduled tests prove to the
// iperf3 server at Host when it requires iperf3's authentication (the
// client's --username, --rsa-public-key-path and --use-pkcs1-padding,
// with the password iperf3 reads from IPERF3_PASSWORD kept in a file).
// Credentials are capabilities: they come from this file only, never
// from a test line, a mesh file or the API.
type Iperf3Credential struct {
	// Host is the server's host as the tests dial it: the host of the
	// task's destination address (or of its destination when it has
	// none), not the mesh's name for it, so that a task whose address
	// points elsewhere is not given the credential.
	Host             string `yaml:"host"`
	Username         string `yaml:"username"`
	RSAPublicKeyPath string `yaml:"rsa_public_key_path"`
	// PasswordFile holds the password on its first line, readable by
	// its owner only, as the key files.
	PasswordFile    string `yaml:"password_file"`
	UsePKCS1Padding bool   `yaml:"use_pkcs1_padding"`
}

// Iperf3Login is a checked Iperf3Credential, as the daemon's tests use
// it.
type Iperf3Login struct {
	Host          string // as testline.ParseDest reads it
	PublicKeyPath string
	// Cred carries the password; its String and GoString never show it.
	Cred *iperf3.Credentials
}

// maxPasswordFile bounds a password file read (iperf3's token is far
// shorter).
const maxPasswordFile = 4 << 10

// credentialFlags are the client's flags of an entry's keys, to say the
// client's errors in the file's words.
var credentialFlags = strings.NewReplacer(
	"--username", "username", "--rsa-public-key-path", "rsa_public_key_path", "--use-pkcs1-padding", "use_pkcs1_padding")

// load reads the entry's key and password with the client's own checks
// (authflags.Iperf3Client), so that the daemon's tests are given what
// `wireperf client --username` would accept. Its errors name the key
// and never the password.
func (c Iperf3Credential) load() (*Iperf3Login, error) {
	dest, err := credentialHost(c.Host)
	if err != nil {
		return nil, err
	}
	if c.PasswordFile == "" {
		return nil, errors.New("password_file: missing (the password of username, on its first line)")
	}
	password, err := readPassword(c.PasswordFile)
	if err != nil {
		return nil, err
	}
	flags := authflags.Iperf3Client{User: c.Username, PublicKey: c.RSAPublicKeyPath, PKCS1: c.UsePKCS1Padding}
	cred, err := flags.Credentials(func() (string, error) { return password, nil })
	if err != nil {
		return nil, errors.New(credentialFlags.Replace(err.Error()))
	}
	return &Iperf3Login{Host: dest, PublicKeyPath: c.RSAPublicKeyPath, Cred: cred}, nil
}

// credentialHost reads an entry's host as the tests' destinations are
// read, so that the two compare.
func credentialHost(host string) (string, error) {
	if host == "" {
		return "", errors.New("host: missing (the iperf3 server's host, as the tests dial it)")
	}
	d, err := testline.ParseDest(host)
	if err != nil || d.Port != 0 {
		return "", fmt.Errorf("host: %q: want a host name or an address, without a port", host)
	}
	return strings.ToLower(d.Host), nil
}

// readPassword is a password file's first line. Its errors say the file
// and never its content.
func readPassword(path string) (string, error) {
	f, err := auth.OpenPrivate(path)
	if err != nil {
		return "", fmt.Errorf("password_file: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPasswordFile+1))
	if err != nil {
		return "", fmt.Errorf("password_file %s: %v", path, err)
	}
	if len(data) > maxPasswordFile {
		return "", fmt.Errorf("password_file %s: over %d bytes", path, maxPasswordFile)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	clear(data)
	if line = strings.TrimRight(line, "\r"); line == "" {
		return "", fmt.Errorf("password_file %s: its first line is empty", path)
	}
	return line, nil
}

// clientArgs are the flags of this host's configuration that t's test
// gets, and what its environment gets: the key and TLS trust between
// wireperf hosts (Config.ClientArgs), or, to a host with iperf3's
// credentials, those credentials instead. Such a host is an iperf3
// server, which can neither prove a key nor speak TLS: a client with
// either refuses to test it.
func (d *Daemon) clientArgs(t *schedule.Task) (args, env []string) {
	login := d.iperf3Login(t)
	if login == nil {
		return d.cfg.ClientArgs, nil
	}
	return login.args(), login.env()
}

// iperf3Login is the credential for the server t dials, or nil. Only a
// bulk test (client) speaks iperf3's protocol.
func (d *Daemon) iperf3Login(t *schedule.Task) *Iperf3Login {
	if len(d.cfg.Iperf3Logins) == 0 || testKind(t) != measure.KindClient {
		return nil
	}
	dest, err := taskDest(t)
	if err != nil {
		return nil
	}
	host := strings.ToLower(dest.Host)
	for i := range d.cfg.Iperf3Logins {
		if d.cfg.Iperf3Logins[i].Host == host {
			return &d.cfg.Iperf3Logins[i]
		}
	}
	return nil
}

// args are the client's flags of l: the password is not among them (a
// command line is seen by every user of the host), env carries it.
func (l *Iperf3Login) args() []string {
	args := []string{"--username=" + l.Cred.User, "--rsa-public-key-path=" + l.PublicKeyPath}
	if l.Cred.PKCS1 {
		args = append(args, "--use-pkcs1-padding")
	}
	return args
}

// env is the test's environment entry of the password, read by the
// client as iperf3's is (authflags.PasswordEnv); the child's environment
// is readable by its user and root only.
func (l *Iperf3Login) env() []string {
	return []string{authflags.PasswordEnv + "=" + l.Cred.Password}
}
