package testline

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/spec"
)

func mustParse(t *testing.T, s string) Line {
	t.Helper()
	w, err := Split(s)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	l, err := Parse(w)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return l
}

func TestParseForms(t *testing.T) {
	for in, want := range map[string]string{
		"client -t 10 -P 4 -O 2":                                   "client --time=10 --parallel=4 --omit=2",
		"client -t10 -P=4":                                         "client --time=10 --parallel=4",
		"client -uR -b 750m":                                       "client --udp --reverse --bitrate=750m",
		"client --udp=false -R=false":                              "client --udp=false --reverse=false",
		"client --time=2.5 --bidir -C bbr":                         "client --time=2.5 --bidir --congestion=bbr",
		"client -B 127.0.0.1 --cport 40000":                        "client --bind=127.0.0.1 --cport=40000",
		"client -B ::ffff:1.2.3.4":                                 "client --bind=::ffff:1.2.3.4",
		"client -6 -k 100 -S 0x10 -L 0x12 -R --rcv-timeout 500":    "client --version6 --blockcount=100 --tos=0x10 --flowlabel=0x12 --reverse --rcv-timeout=500",
		"client -4u --fq-rate 10m --dont-fragment":                 "client --version4 --udp --fq-rate=10m --dont-fragment",
		"rr --sizes 64,1472 --load tcp,2,down,300m --load-time 8s": "rr --sizes=64,1472 --load=tcp,2,down,300m --load-time=8s",
		"udpmon --spacing 0:40us:1us --count 1000 -w 4K -T lab-a":  "udpmon --spacing=0:40us:1us --count=1000 --window=4K --title=lab-a",
		"trace --max-hops 12 --probes 2 --proto icmp":              "trace --max-hops=12 --probes=2 --proto=icmp",
		// A flag with a default when given alone takes it, as pflag does;
		// a value of its own comes after '='.
		"client -u --isochronous -t 2":                      "client --udp --isochronous=60:20m,0 --time=2",
		"client -u --isochronous=30:8m,1m --ipg 0.05 -t 10": "client --udp --isochronous=30:8m,1m --ipg=0.05 --time=10",
	} {
		l := mustParse(t, in)
		if got := l.String(); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
		// The canonical words read back to the same line.
		again, err := Parse(l.Words())
		if err != nil || !reflect.DeepEqual(again, l) {
			t.Errorf("%s: canonical words read back as %+v, %v", in, again, err)
		}
	}
}

// The lines a review used to run commands, name files and read keys as
// root through a daemon, and others like them: each is refused, and the
// error names the word.
func TestParseRefuses(t *testing.T) {
	for in, want := range map[string]string{
		"lab NAME a -- sh -c id":                `"lab": a test starts with`,
		"exec":                                  `"exec": a test starts with`,
		"client --logfile /etc/passwd":          "--logfile: names a file",
		"client --tcpinfo-csv /tmp/x.csv":       "--tcpinfo-csv: names a file",
		"client --save --db /tmp/x.db":          "--save: the daemon stores",
		"client --db=postgres://x":              "--db: names an archive",
		"client --auth-key-file /etc/shadow":    "--auth-key-file: names a key file",
		"client --tls-ca /etc/ssl/x.pem":        "--tls-ca: names a file",
		"udpmon --save --campaign c":            "--save: the daemon stores",
		"udpmon --csv":                          "--csv: the daemon sets the output",
		"client -J":                             "-J: the daemon sets the output",
		"client --json-stream":                  "--json-stream: the daemon sets",
		"client -p 5202":                        "-p: the port comes from",
		"client --port=5202":                    "--port: the port comes from",
		"client 10.0.0.1":                       `"10.0.0.1": a test line takes flags only`,
		"client -- --logfile":                   `"--": a test line takes flags only`,
		"client -c host":                        "-c: the destination comes from the task",
		"client -uQ":                            "-Q: not a measurement flag of client",
		"client -F /etc/shadow":                 "-F: names a file",
		"client --file=/etc/shadow":             "--file: names a file",
		"client -R --file /tmp/x":               "--file: names a file",
		"client -A 0":                           "-A: pins the whole process",
		"client -X eth0":                        "-X: binds to an interface",
		"client --cntl-ka=60/10/3":              "--cntl-ka: the daemon keeps",
		"client --bogus":                        "--bogus: not a measurement flag of client",
		"rr -P 4":                               "-P: not a measurement flag of rr",
		"client -t":                             "-t: needs a value",
		"client --time":                         "--time: needs a value",
		"client -t --logfile":                   "--time: \"--logfile\": want a value, not a flag",
		"client -B host.example":                "--bind: \"host.example\": want an IP address",
		"client -B fe80::1%eth0":                "--bind: \"fe80::1%eth0\": want an IP address",
		"client --cport 22":                     "--cport: \"22\": want a port from 1024",
		"client -C ../../x":                     "--congestion: \"../../x\": want a word",
		"client --udp=maybe":                    "--udp: \"maybe\": want true or false",
		"client -t 10/../x":                     "--time: \"10/../x\": want a number",
		"rr --load tcp,2,down,300m/../../etc":   "--load:",
		"client -T " + strings.Repeat("x", 257): "--title: 257 bytes, over the limit of 256",
		"client -u --isochronous 60:20m,5m":     `"60:20m,5m": a test line takes flags only`,
		"client -u --isochronous=60:20m;id":     "--isochronous: \"60:20m;id\": want a list",
	} {
		words := strings.Fields(in)
		_, err := Parse(words)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", in, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: more than one line: %q", in, err)
		}
	}
	if _, err := Parse(nil); err == nil {
		t.Error("an empty line was taken")
	}
	if _, err := Parse(append([]string{"client"}, strings.Fields(strings.Repeat("-R ", MaxWords))...)); err == nil {
		t.Error("a line over MaxWords was taken")
	}
}

func TestSplit(t *testing.T) {
	for _, in := range []string{"lab x a -- sh -c id>FILE", "client -T 'a b'", "client $(id)", "client; id", "client `id`", "  "} {
		if _, err := Split(in); err == nil {
			t.Errorf("%q: split", in)
		}
	}
	if w, err := Split(" client  -t 5 "); err != nil || !reflect.DeepEqual(w, []string{"client", "-t", "5"}) {
		t.Errorf("%v %v", w, err)
	}
}

func TestArgs(t *testing.T) {
	l := mustParse(t, "client -t 5 -R")
	d, err := ParseDest("exec")
	if err != nil {
		t.Fatal(err)
	}
	// A destination that is also a command's name is still only a host:
	// it comes after "--", and the command is the line's.
	got := l.Args(d)
	want := []string{"client", "--time=5", "--reverse", "--json", "--", "exec"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
	d, _ = ParseDest("[::1]:5202")
	got = l.Args(d)
	if got[len(got)-1] != "::1" || got[len(got)-4] != "--port=5202" {
		t.Fatalf("%q", got)
	}
	// A trace's probes go to no server: the destination's port is left out.
	d, _ = ParseDest("10.0.0.2:5201")
	got = mustParse(t, "trace --probes 1").Args(d)
	want = []string{"trace", "--probes=1", "--json", "--", "10.0.0.2"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("trace: %q, want %q", got, want)
	}
}

func TestParseDest(t *testing.T) {
	for in, want := range map[string]Dest{
		"fra.example.net":      {"fra.example.net", 0},
		"fra.example.net:5201": {"fra.example.net", 5201},
		"10.1.2.3":             {"10.1.2.3", 0},
		"[2001:db8::1]:80":     {"2001:db8::1", 80},
		"[2001:db8::1]":        {"2001:db8::1", 0},
		"2001:db8::1":          {"2001:db8::1", 0},
		"exec":                 {"exec", 0},
	} {
		got, err := ParseDest(in)
		if err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-c", "--logfile=/x", "a b", "x:0", "x:65536", "x:-1", "a..b", "-a.b", "a-.b", "fe80::1%eth0", "[fe80::1%eth0]:1", "x/y", strings.Repeat("a.", 130) + "a"} {
		if d, err := ParseDest(in); err == nil {
			t.Errorf("%q: taken as %+v", in, d)
		}
	}
}

func TestCheckBind(t *testing.T) {
	local := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}
	if err := mustParse(t, "client -t 1").CheckBind(local); err != nil {
		t.Error(err)
	}
	if err := mustParse(t, "client -B 127.0.0.1").CheckBind(local); err != nil {
		t.Error(err)
	}
	if err := mustParse(t, "client -B ::ffff:127.0.0.1").CheckBind(local); err != nil {
		t.Error(err)
	}
	if err := mustParse(t, "client -B 192.0.2.1").CheckBind(local); err == nil || !strings.Contains(err.Error(), "not an address of this host") {
		t.Errorf("%v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("client -t 10 -P 4 -O 2")
	f.Add("client -uR -b 750m/32 -T x")
	f.Add("rr --sizes 64,1472 --load tcp,2")
	f.Add("udpmon --spacing 0:40us:1us -B ::1")
	f.Add("lab x a -- sh -c id")
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Parse(strings.Fields(s))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a multi-line error: %q", err)
			}
			return
		}
		again, err := Parse(l.Words())
		if err != nil || !reflect.DeepEqual(again, l) {
			t.Fatalf("%q: canonical %q reads back as %+v, %v", s, l.Words(), again, err)
		}
		args := l.Args(Dest{Host: "h", Port: 1})
		for _, a := range args[1 : len(args)-2] {
			if !strings.HasPrefix(a, "--") || strings.ContainsAny(a, " \t\n") {
				t.Fatalf("%q: argument %q is not one bound flag", s, a)
			}
		}
	})
}

// A title as long as the wire takes (spec.MaxTitleLength) is a title a
// line takes: one limit, not two.
func TestTitleLimitIsTheWires(t *testing.T) {
	if _, err := Parse([]string{"client", "-T", strings.Repeat("x", spec.MaxTitleLength)}); err != nil {
		t.Errorf("a title of %d bytes: %v", spec.MaxTitleLength, err)
	}
}
