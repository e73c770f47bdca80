package plot

import (
	"fmt"

	"github.com/wireperf/wireperf/internal/resultjson"
)

// DocumentFigure draws kind (timeline, latency, load, udpmon or rrul) of one
// wireperf -J document, named subject in the footer. The document must be
// of the kind the figure needs: a client's or server's for timeline, an
// rr run's for latency and load, a udpmon sweep's for udpmon, an rrul
// run's for rrul.
func DocumentFigure(kind string, doc *resultjson.Document, subject string) (*Figure, error) {
	switch kind {
	case "timeline":
		in, err := TimelineOf(doc.Result, subject)
		if err != nil {
			return nil, err
		}
		return Timeline(in)
	case "latency":
		in, err := LatencyOf(doc.Result, subject)
		if err != nil {
			return nil, err
		}
		return Latency(in)
	case "load":
		in, err := LoadOf(doc.Result, subject)
		if err != nil {
			return nil, err
		}
		return Load(in)
	case "rrul":
		in, err := RRULOf(doc.RRUL, subject)
		if err != nil {
			return nil, err
		}
		return RRUL(in)
	case "udpmon":
		in, err := UDPMonOf(doc.Sweep, subject)
		if err != nil {
			return nil, err
		}
		return UDPMon(in)
	}
	return nil, fmt.Errorf("no %s figure of one run: want timeline, latency, load, udpmon or rrul", kind)
}
