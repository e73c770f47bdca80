package campaign

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/archive"
)

// parseFlags parses a sweep command line's campaign flags.
func parseSweepFlags(t *testing.T, args ...string) (*Flags, *pflag.FlagSet) {
	t.Helper()
	f, fs := NewFlags(), pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	f.Register(fs)
	fs.String("db", "", "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f, fs
}

func TestFlagsSpec(t *testing.T) {
	f, fs := parseSweepFlags(t, "h", "-w", "64K,1M", "-P", "1,4", "-u", "--name", "g", "--repeat", "2", "--pause", "5s", "--", "-i", "0")
	s, err := f.Spec(fs, fs.Args(), fs.ArgsLenAtDash())
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "g" || s.Repeat != 2 || s.Pause != 5*time.Second || strings.Join(s.Targets, ",") != "h" || strings.Join(s.Fixed, " ") != "-i 0" {
		t.Fatalf("spec %+v", s)
	}
	var axes []string
	for _, a := range s.Axes {
		axes = append(axes, a.Name)
	}
	if strings.Join(axes, ",") != "window,parallel,proto" {
		t.Fatalf("axes %v, want window,parallel,proto (-u as a fixed proto axis)", axes)
	}
	if got := len(s.Plan()); got != 2*2*2 {
		t.Fatalf("%d runs, want 8", got)
	}
}

func TestFlagsSpecErrorsAreFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--name", "g"}, "sweep needs one HOST"},
		{[]string{"h", "-P", "1"}, "sweep needs --name"},
		{[]string{"h", "--name", "g", "-P", "x"}, "--parallel: "},
		{[]string{"h", "--name", "g", "-u", "--proto", "tcp"}, "--udp and --proto: choose one"},
		{[]string{"h", "--name", "g", "-R", "--bidir"}, "-R and --bidir: choose one"},
	} {
		f, fs := parseSweepFlags(t, c.args...)
		_, err := f.Spec(fs, fs.Args(), fs.ArgsLenAtDash())
		if err == nil || !strings.Contains(err.Error(), c.want) || !IsFlagError(err) {
			t.Errorf("%v: %v, want a FlagError with %q", c.args, err, c.want)
		}
	}
	if IsFlagError(errors.New("x")) {
		t.Error("a plain error is no FlagError")
	}
}

// A flags-form campaign is stored as its canonical arguments, without
// the flags that say where it runs, and rebuilds the same plan.
func TestStoredArgsRoundTrip(t *testing.T) {
	args := []string{"h", "-P", "1,2", "--name", "g", "--db", "x.db", "--", "-i", "0"}
	f, fs := parseSweepFlags(t, args...)
	s, err := f.Spec(fs, fs.Args(), fs.ArgsLenAtDash())
	if err != nil {
		t.Fatal(err)
	}
	canon := CanonicalArgs(fs, fs.Args(), fs.ArgsLenAtDash())
	if got, want := strings.Join(canon, " "), "--name=g --parallel=1,2 h -- -i 0"; got != want {
		t.Fatalf("canonical args %q, want %q", got, want)
	}
	stored := archive.Campaign{Name: "g", Spec: StoredArgs(fs, fs.Args(), fs.ArgsLenAtDash()), SpecFormat: "flags"}
	back, err := FromStored(stored)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Plan()) != len(s.Plan()) || back.Plan()[0].ID != s.Plan()[0].ID {
		t.Fatalf("the stored campaign plans other runs")
	}
	if _, err := FromStored(archive.Campaign{Name: "g", Spec: `{"args":["--name=g"]}`, SpecFormat: "flags"}); !IsFlagError(err) {
		t.Fatalf("stored args without a HOST: %v, want a FlagError", err)
	}
}

func TestChangedFlag(t *testing.T) {
	if _, fs := parseSweepFlags(t, "--db", "x"); ChangedFlag(fs) != "" {
		t.Fatalf("--db named as a campaign flag")
	}
	if _, fs := parseSweepFlags(t, "--db", "x", "--repeat", "3"); ChangedFlag(fs) != "repeat" {
		t.Fatalf("ChangedFlag = %q, want repeat", ChangedFlag(fs))
	}
}

func TestWritePlan(t *testing.T) {
	s := &Spec{Name: "p", Targets: []string{"h"}, Repeat: 1, Order: OrderSequential,
		Axes: []AxisValues{{Name: AxisWindow, Values: mustList(t, AxisWindow, "64K,16M")}}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	runs := s.Plan()
	var b bytes.Buffer
	WritePlan(&b, s, runs, func(Run) time.Duration { return 10 * time.Second }, 4<<20, 4<<20)
	out := b.String()
	for _, want := range []string{"   1  " + runs[0].ID + "  window=64K  rep 1\n", "2 runs, estimated 22s (order sequential, pause 0s)\n", "NOTE on this host: "} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	WritePlan(&b, s, runs, func(Run) time.Duration { return 10 * time.Second }, 0, 0)
	if strings.Contains(b.String(), "NOTE") {
		t.Errorf("a note without the host's limits:\n%s", b.String())
	}
}

func TestProgressLines(t *testing.T) {
	s := &Spec{Name: "p", Targets: []string{"h"}, Repeat: 1, Order: OrderSequential,
		Axes: []AxisValues{{Name: AxisParallel, Values: mustList(t, AxisParallel, "1,2")}}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	runs := s.Plan()
	var b bytes.Buffer
	p := &Progress{Out: &b, Spec: s, Total: len(runs) + 3, Todo: runs}
	p.Start(t.Context(), "x.db")
	p.Begin(runs[0], 1)
	p.Done(runs[0], 1, &archive.Run{State: archive.StateFailed, Error: "refused"}, errors.New("refused"))
	p.Done(runs[0], 2, nil, errors.New("cannot store"))
	p.Done(runs[1], 1, &archive.Run{State: archive.StateFinished}, nil)
	err := p.Finish(Outcome{Finished: 1, Failed: runs[:1]})
	want := "campaign p: 5 runs, 2 to run, order sequential (shuffle key 0), archive x.db\n" +
		"[1/5] " + runs[0].ID[:8] + " parallel=1 rep 1: failed: refused\ncannot store\n" +
		"[2/5] " + runs[1].ID[:8] + " parallel=2 rep 1: " + (&archive.Run{}).Summary.Line() + "\n" +
		"campaign p: 1 finished, 1 failed, 3 done before\n"
	if b.String() != want {
		t.Fatalf("progress:\n%q\nwant\n%q", b.String(), want)
	}
	if err == nil || err.Error() != "1 run failed twice (stored with their errors); resume with wireperf sweep --resume p" {
		t.Fatalf("error %v", err)
	}
	b.Reset()
	err = p.Finish(Outcome{Aborted: 1, Cancelled: true})
	if b.String() != "campaign p: 0 finished, 0 failed, 1 aborted (interrupted), 3 done before\n" || err == nil || !strings.HasPrefix(err.Error(), "interrupted: ") {
		t.Fatalf("an interrupted sweep: %q, %v", b.String(), err)
	}
}

// The axes are the client's flags testflags declares a campaign's, with
// their shorthands, and direction and proto: the table the code had
// before it was derived.
func TestAxesAreDeclared(t *testing.T) {
	want := map[string]kind{
		AxisWindow: kindSize, AxisParallel: kindCount, AxisTime: kindDuration, AxisLength: kindSize,
		AxisBitrate: kindRate, AxisSpacing: kindDuration, AxisCongestion: kindWord, AxisSetMSS: kindCount,
		AxisDirection: kindWord, AxisProto: kindWord,
	}
	if !reflect.DeepEqual(axisKinds, want) {
		t.Errorf("axes %v, want %v", axisKinds, want)
	}
	wantAliases := map[string]string{"w": AxisWindow, "P": AxisParallel, "t": AxisTime, "l": AxisLength, "b": AxisBitrate, "C": AxisCongestion, "M": AxisSetMSS}
	if !reflect.DeepEqual(aliases, wantAliases) {
		t.Errorf("aliases %v, want %v", aliases, wantAliases)
	}
}
