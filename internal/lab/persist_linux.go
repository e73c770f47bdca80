//go:build linux

package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// StateDir holds the files of persistent labs: lab-NAME.json (the
// configuration), lab-NAME.status.json (the router's counters, rewritten
// every second), lab-NAME.pid and lab-NAME.log (the router's output).
var StateDir = "/run/wireperf"

type persisted struct {
	Info   Info         `json:"info"`
	Router RouterConfig `json:"router"`
}

func stateFile(name, suffix string) string {
	return filepath.Join(StateDir, "lab-"+name+suffix)
}

func persistNS(name, host string) string { return "wp-" + name + "-" + host }

// Up creates the persistent lab NAME: namespaces wp-NAME-a, wp-NAME-r and
// wp-NAME-b joined as a ─ r ─ b, with the impairment router running in r as
// a detached process (cfg.RouterCommand plus "--name NAME", by default
// `<this executable> lab router --name NAME`, which must call RouterMain).
// It returns when the router has written its first counters. On any
// failure it removes what it made.
func Up(name string, cfg Config) (*Info, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if reason := missingPrivilege(true); reason != "" {
		return nil, fmt.Errorf("lab: %s", reason)
	}
	for _, h := range persistHosts() {
		if _, err := os.Stat(nsPath(persistNS(name, h))); err == nil {
			return nil, fmt.Errorf("lab: %q is already up (namespace %s exists); take it down with `wireperf lab down %s`", name, persistNS(name, h), name)
		}
	}
	atob, btoa := cfg.Directions()
	if err := atob.Validate(); err != nil {
		return nil, err
	}
	if err := btoa.Validate(); err != nil {
		return nil, err
	}
	mtu := cfg.MTU
	if mtu == 0 {
		mtu = 1500
	}
	start := cfg.RandStart
	if start == 0 {
		start = uint64(time.Now().UnixNano())
	}
	argv := cfg.RouterCommand
	if len(argv) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("lab: cannot find this executable for the router: %w", err)
		}
		argv = []string{exe, "lab", "router"}
	}
	argv = append(append([]string(nil), argv...), "--name", name)

	topo, routerA, err := cfg.topology(mtu)
	if err != nil {
		return nil, err
	}
	if err := topo.Validate(); err != nil {
		return nil, err
	}
	l := &Lab{topo: topo, prefix: "wp-" + name + "-"}
	fail := func(err error) (*Info, error) {
		_ = Down(name)
		l.Close()
		return nil, err
	}
	if err := os.MkdirAll(StateDir, 0o755); err != nil {
		return nil, err
	}
	if err := l.build(); err != nil {
		return fail(err)
	}
	r := l.hosts["r"]
	info := Info{
		Name:       name,
		Namespaces: map[string]string{},
		Addrs:      map[string]string{},
		AtoB:       atob.String(),
		BtoA:       btoa.String(),
		RandStart:  start,
		MTU:        mtu,
		StatusFile: stateFile(name, ".status.json"),
		LogFile:    stateFile(name, ".log"),
		Senders:    cfg.Senders,
		AccessRate: cfg.AccessRate,
		TCPBuffers: cfg.TCPBuffers,
	}
	if info.TCPBuffers == "" {
		info.TCPBuffers = BuffersStock
	}
	for _, h := range topo.Hosts {
		info.Namespaces[h] = l.hosts[h].NS
		info.Addrs[h] = l.hosts[h].Addr.String()
	}
	rc := RouterConfig{
		NetNS: r.NS, IfaceA: r.Iface(routerA), IfaceB: r.Iface("b"),
		AtoB: atob, BtoA: btoa, RandStart: start, MTU: mtu,
		StatusFile: info.StatusFile, StatusInterval: time.Second,
	}
	if err := writeJSON(stateFile(name, ".json"), persisted{Info: info, Router: rc}); err != nil {
		return fail(err)
	}
	_ = os.Remove(info.StatusFile)
	logf, err := os.OpenFile(info.LogFile, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fail(err)
	}
	defer logf.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return fail(err)
	}
	defer devnull.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("lab: start router %q: %w", strings.Join(argv, " "), err))
	}
	pid := cmd.Process.Pid
	info.RouterPID = pid
	if err := os.WriteFile(stateFile(name, ".pid"), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		return fail(err)
	}
	if err := writeJSON(stateFile(name, ".json"), persisted{Info: info, Router: rc}); err != nil {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		return fail(err)
	}
	exited := make(chan error, 1)
	go func() { _, err := cmd.Process.Wait(); exited <- err }()
	deadline := time.After(10 * time.Second)
	for {
		var st routerStatus
		if b, err := os.ReadFile(info.StatusFile); err == nil && json.Unmarshal(b, &st) == nil && st.PID == pid {
			// The router runs; let it go on without us. The goroutine
			// above stays blocked in Wait until this process exits, which
			// keeps the child from becoming a zombie while we live.
			return &info, nil
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(info.LogFile)
			return fail(fmt.Errorf("lab: router exited during start-up: %s", strings.TrimSpace(string(log))))
		case <-deadline:
			_ = cmd.Process.Kill()
			log, _ := os.ReadFile(info.LogFile)
			return fail(fmt.Errorf("lab: router did not report within 10 s: %s", strings.TrimSpace(string(log))))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func writeJSON(path string, v any) error {
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, js, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func load(name string) (*persisted, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(stateFile(name, ".json"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("lab: no lab named %q is up", name)
		}
		return nil, err
	}
	var p persisted
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("lab: %s: %w", stateFile(name, ".json"), err)
	}
	return &p, nil
}

// LoadRouterConfig returns the router configuration that Up saved for NAME.
func LoadRouterConfig(name string) (RouterConfig, error) {
	p, err := load(name)
	if err != nil {
		return RouterConfig{}, err
	}
	return p.Router, nil
}

// RouterMain is the body of `wireperf lab router --name NAME`: it runs
// the router of the persistent lab NAME until ctx is cancelled (the CLI
// cancels it on SIGTERM or SIGINT, which Down sends).
func RouterMain(ctx context.Context, name string) error {
	rc, err := LoadRouterConfig(name)
	if err != nil {
		return err
	}
	rc.Logf = func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, time.Now().Format(time.RFC3339)+" "+format+"\n", args...)
	}
	return RunRouter(ctx, rc)
}

// routerAlive reports whether pid runs and is the router of this lab (its
// command line names the lab), so a recycled pid is never signalled.
func routerAlive(pid int, name string) bool {
	if pid <= 1 {
		return false
	}
	if err := unix.Kill(pid, 0); err != nil {
		return false
	}
	cl, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimRight(string(cl), "\x00"), "\x00")
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--name" && args[i+1] == name {
			return true
		}
	}
	return false
}

func readPID(name string) int {
	b, err := os.ReadFile(stateFile(name, ".pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// Status returns the persistent lab's configuration, whether its router
// runs, and the router's latest counters with the TUN devices' own.
func Status(name string) (*State, error) {
	p, err := load(name)
	if err != nil {
		return nil, err
	}
	st := &State{Info: p.Info}
	pid := readPID(name)
	st.RouterPID = pid
	st.Running = routerAlive(pid, name)
	b, err := os.ReadFile(p.Info.StatusFile)
	if err != nil {
		return st, fmt.Errorf("lab: router status: %w", err)
	}
	var rs routerStatus
	if err := json.Unmarshal(b, &rs); err != nil {
		return st, fmt.Errorf("lab: router status: %w", err)
	}
	st.Updated, st.Since, st.Router = rs.Updated, rs.Started, rs.Stats
	for n := 1; n <= p.Info.Senders; n++ {
		if ls, err := linkStats(persistNS(name, "s"), ifaceTo(SenderName(n))); err == nil {
			st.Access = append(st.Access, AccessStats{Sender: SenderName(n), Link: ls})
		}
	}
	if st.Running {
		// Fresh device counters (the router's may be up to a second old).
		if la, err := linkStats(p.Router.NetNS, tunA); err == nil {
			if lb, err := linkStats(p.Router.NetNS, tunB); err == nil {
				st.Router.AtoB.TunIn, st.Router.AtoB.TunOut = &la, &lb
				st.Router.BtoA.TunIn, st.Router.BtoA.TunOut = &lb, &la
			}
		}
	}
	return st, nil
}

// Down stops the router of the persistent lab NAME (SIGTERM, then SIGKILL
// after 3 s), deletes its namespaces and removes its files. It also cleans
// up a lab whose files are gone or whose router died. A lab of which
// nothing is left, no namespace and no file, is an error: the name is
// probably mistyped.
func Down(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if !anythingLeft(name) {
		return fmt.Errorf("lab: no lab named %q is up (wireperf lab list shows those that are)", name)
	}
	var errs []error
	if pid := readPID(name); routerAlive(pid, name) {
		_ = unix.Kill(pid, unix.SIGTERM)
		deadline := time.Now().Add(3 * time.Second)
		for routerAlive(pid, name) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if routerAlive(pid, name) {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
	var names []string
	for _, h := range persistHosts() {
		names = append(names, persistNS(name, h))
	}
	if err := deleteNamespaces(names); err != nil {
		errs = append(errs, err)
	}
	for _, s := range stateSuffixes {
		if err := os.Remove(stateFile(name, s)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// stateSuffixes are the files a persistent lab keeps in StateDir.
var stateSuffixes = []string{".json", ".json.tmp", ".status.json", ".status.json.tmp", ".pid", ".log"}

// anythingLeft reports whether any namespace or file of the lab NAME
// exists.
func anythingLeft(name string) bool {
	for _, h := range persistHosts() {
		if _, err := os.Lstat(nsPath(persistNS(name, h))); err == nil {
			return true
		}
	}
	for _, s := range stateSuffixes {
		if _, err := os.Lstat(stateFile(name, s)); err == nil {
			return true
		}
	}
	return false
}

// Exec runs argv inside host ("a", "r" or "b") of the persistent lab NAME
// with this process's standard input, output and error, and waits for it.
// A non-zero exit comes back as an *exec.ExitError.
func Exec(name, host string, argv []string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if !IsHostName(host) {
		return fmt.Errorf("lab: host %q is not a, r, b, s or a sender a1…a%d", host, MaxSenders)
	}
	if len(argv) == 0 {
		return errors.New("lab: exec needs a command")
	}
	ns := persistNS(name, host)
	if _, err := os.Stat(nsPath(ns)); err != nil {
		return fmt.Errorf("lab: %q is not up (no namespace %s)", name, ns)
	}
	// ip netns exec replaces itself with argv, so the signals passed on
	// reach the command itself.
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns}, argv...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), EnvLab+"="+name) // a test through the lab can read its router's counters
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT)
	defer signal.Stop(sigs)
	return runForwarding(cmd, sigs)
}

// List returns the names of the persistent labs that have state files.
func List() ([]string, error) {
	ents, err := os.ReadDir(StateDir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "lab-") && strings.HasSuffix(n, ".json") && !strings.HasSuffix(n, ".status.json") {
			names = append(names, strings.TrimSuffix(strings.TrimPrefix(n, "lab-"), ".json"))
		}
	}
	return names, nil
}
