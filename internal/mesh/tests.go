package mesh

import (
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/units"
	"github.com/wireperf/wireperf/internal/yamlfile"
)

// test reads one test: its line (parsed once, as the test's command
// reads it: a measurement command and its measurement flags only, with
// values the command accepts), its class, how long a run holds its
// hosts (the file's reserve, else schedule.ReserveOf) and its grid's
// thresholds.
func (p *parser) test(e yamlfile.Entry) (Test, error) {
	key := "tests." + e.Key
	if err := schedule.CheckName(e.Key); err != nil {
		return Test{}, p.Errorf(e.KeyNode, key, "a test's name: %v", err)
	}
	t := Test{Name: e.Key, Class: schedule.Exclusive}
	var testNode *yaml.Node
	classGiven := false
	fs, err := p.Mapping(e.Value, key, "test", "class", "reserve", "thresholds")
	if err != nil {
		return t, err
	}
	for _, f := range fs {
		fk := key + "." + f.Key
		switch f.Key {
		case "test":
			v, err := p.Scalar(f.Value, fk)
			if err != nil {
				return t, err
			}
			if t.test, t.Args, err = measure.ParseLineText(v); err != nil {
				return t, p.Errorf(f.Value, fk, "%v", err)
			}
			testNode = f.Value
		case "class":
			v, err := p.Scalar(f.Value, fk)
			if err != nil {
				return t, err
			}
			if t.Class, err = schedule.ParseClass(v); err != nil {
				return t, p.Errorf(f.Value, fk, "%v", err)
			}
			classGiven = true
		case "reserve":
			if t.Reserve, err = p.duration(f, fk); err != nil {
				return t, err
			}
			t.ReserveGiven = t.Reserve > 0
		case "thresholds":
			if t.Thresholds, err = p.thresholds(f.Value, fk); err != nil {
				return t, err
			}
		}
	}
	if len(t.Args) == 0 {
		return t, p.Errorf(e.Value, key+".test", "missing")
	}
	if !classGiven && (t.Args[0] == "trace" || t.Args[0] == "ping" || t.Args[0] == "tcp-connect") {
		// A trace's few probes disturb no throughput test, and a path is
		// worth most when recorded beside one; so are ping's and
		// tcp-connect's.
		t.Class = schedule.Background
	}
	if t.Reserve == 0 {
		if t.Reserve, err = schedule.ReserveOf(t.test); err != nil {
			return t, p.Errorf(testNode, key+".test", "%v", err)
		}
	}
	return t, nil
}

// thresholds reads where a test's grid cells turn amber and red.
func (p *parser) thresholds(n *yaml.Node, key string) (schedule.Thresholds, error) {
	var th schedule.Thresholds
	fs, err := p.Mapping(n, key, "goodput_amber", "goodput_red", "loss_amber", "loss_red", "rtt_amber_ms", "rtt_red_ms", "stale_intervals")
	if err != nil {
		return th, err
	}
	for _, f := range fs {
		fk := key + "." + f.Key
		v, err := p.Scalar(f.Value, fk)
		if err != nil {
			return th, err
		}
		num := func() (float64, error) {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || x < 0 {
				return 0, p.Errorf(f.Value, fk, "%q: want a non-negative number", v)
			}
			return x, nil
		}
		rate := func() (float64, error) {
			x, err := units.ParseRate(v)
			if err != nil || x < 0 {
				return 0, p.Errorf(f.Value, fk, "%q: want a rate such as 500M (bits per second)", v)
			}
			return x, nil
		}
		switch f.Key {
		case "goodput_amber":
			th.GoodputAmberBps, err = rate()
		case "goodput_red":
			th.GoodputRedBps, err = rate()
		case "loss_amber":
			th.LossAmberPct, err = num()
		case "loss_red":
			th.LossRedPct, err = num()
		case "rtt_amber_ms":
			th.RTTAmberMs, err = num()
		case "rtt_red_ms":
			th.RTTRedMs, err = num()
		case "stale_intervals":
			var x float64
			x, err = num()
			th.StaleIntervals = int(x)
		}
		if err != nil {
			return th, err
		}
	}
	return th, nil
}
