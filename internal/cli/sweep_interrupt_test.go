//go:build linux

package cli

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Ctrl-C in the middle of a campaign: what finished is kept, the run cut
// short is not counted as done, and --resume runs only what is missing.
func TestSweepInterruptedAndResumed(t *testing.T) {
	port := strconv.Itoa(startServer(t))
	db := filepath.Join(t.TempDir(), "a.db")
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := append(labHelperArgv(t, bin), "sweep", "127.0.0.1", "-p", port, "-P", "1,2,3", "-t", "1", "--repeat", "2",
		"--name", "cut", "--db", db, "--order", "sequential")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), labHelperEnv+"="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() }) // a hung child must not hang the test
	defer timer.Stop()
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if strings.HasPrefix(line, "[1/6]") {
			cmd.Process.Signal(syscall.SIGINT) // during the second run
		}
	}
	err = cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	if code != ExitFailed || !strings.Contains(stderr.String(), "--resume cut") {
		t.Fatalf("interrupted sweep: exit %d (%v)\n%s\n%s", code, err, out.String(), stderr.String())
	}
	first := map[string]storedRun{}
	finished, aborted := 0, 0
	for _, r := range listRuns(t, "--db", db, "--campaign", "cut") {
		first[r.ID] = r
		switch r.State {
		case "finished":
			finished++
		case "aborted":
			aborted++
		default:
			t.Errorf("run %s is %s after an interrupt", r.ID, r.State)
		}
	}
	if finished < 1 || finished >= 6 {
		t.Fatalf("%d runs finished before the interrupt\n%s", finished, out.String())
	}
	// The summary counts the run the interrupt cut short (none when it
	// came between two runs).
	summary := "campaign cut: " + strconv.Itoa(finished) + " finished, 0 failed, 0 done before\n"
	if aborted > 0 {
		summary = "campaign cut: " + strconv.Itoa(finished) + " finished, 0 failed, " + strconv.Itoa(aborted) + " aborted (interrupted), 0 done before\n"
	}
	if !strings.Contains(out.String(), summary) {
		t.Errorf("summary after the interrupt lacks %q:\n%s", summary, out.String())
	}
	code, resumed, stderrText := runCLI("sweep", "--resume", "cut", "--db", db, "-q")
	if code != 0 || !strings.Contains(resumed, strconv.Itoa(finished)+" done before") || strings.Count(resumed, " rep ") != 6-finished {
		t.Fatalf("resume: exit %d\n%s%s", code, resumed, stderrText)
	}
	after := listRuns(t, "--db", db, "--campaign", "cut")
	if len(after) != 6 {
		t.Fatalf("%d runs after resuming, want 6", len(after))
	}
	for _, r := range after {
		if r.State != "finished" {
			t.Errorf("run %s is %s after resuming", r.ID, r.State)
		}
		if was, ok := first[r.ID]; ok && was.State == "finished" && was.Start != r.Start {
			t.Errorf("run %s finished before the interrupt and ran again", r.ID)
		}
	}
}
