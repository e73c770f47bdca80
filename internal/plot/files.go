package plot

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wireperf/wireperf/internal/resultjson"
)

// documentKinds are the figures of one run, and the -J document each
// needs.
var documentKinds = map[string]string{
	"timeline": resultjson.KindTest,
	"latency":  resultjson.KindRR,
	"load":     resultjson.KindRR,
	"udpmon":   resultjson.KindUDPMon,
	"rrul":     resultjson.KindRRUL,
}

// A DocumentError says a document is not one a figure can be drawn from:
// another document, or another figure, fixes it.
type DocumentError struct{ Msg string }

func (e *DocumentError) Error() string { return e.Msg }

// CheckDocument says whether doc is the document kind needs. name and
// noun say what it is in the error: "run.json" and "output" for a file,
// "run ID" and "run" for a stored run.
func CheckDocument(kind string, doc *resultjson.Document, name, noun string) error {
	if want := documentKinds[kind]; doc.Kind != want {
		return &DocumentError{fmt.Sprintf("%s is %s %s; plot %s needs %s %s", name, describeDocument(doc.Kind), noun, kind, describeDocument(want), noun)}
	}
	return nil
}

func describeDocument(kind string) string {
	switch kind {
	case resultjson.KindRR:
		return "an rr -J"
	case resultjson.KindUDPMon:
		return "a udpmon -J"
	case resultjson.KindRRUL:
		return "an rrul -J"
	}
	return "a client or server -J"
}

// readFile reads a -J file and checks that it is the document kind
// needs.
func readFile(kind, path string) (*resultjson.Document, error) {
	doc, err := resultjson.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := CheckDocument(kind, doc, path, "output"); err != nil {
		return nil, err
	}
	return doc, nil
}

// FileFigure draws kind (timeline, latency, load, udpmon or rrul) of one -J
// file, named by its file name in the footer.
func FileFigure(kind, path string) (*Figure, error) {
	doc, err := readFile(kind, path)
	if err != nil {
		return nil, err
	}
	fig, err := DocumentFigure(kind, doc, filepath.Base(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return fig, nil
}

// Comparable are the figures CompareFiles overlays.
var Comparable = []string{"timeline", "latency", "udpmon"}

// CompareFiles overlays kind (one of Comparable) of several -J files,
// each labelled by its file name without the extension.
func CompareFiles(kind string, paths []string) (*Figure, error) {
	if !slices.Contains(Comparable, kind) {
		return nil, fmt.Errorf("no figure %q to compare: want one of %s", kind, strings.Join(Comparable, ", "))
	}
	labels := make([]string, len(paths))
	var timelines []TimelineInput
	var latencies []LatencyInput
	var sweeps []UDPMonInput
	for i, path := range paths {
		labels[i] = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		doc, err := readFile(kind, path)
		if err != nil {
			return nil, err
		}
		switch kind {
		case "timeline":
			in, err := TimelineOf(doc.Result, filepath.Base(path))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			timelines = append(timelines, in)
		case "latency":
			in, err := LatencyOf(doc.Result, filepath.Base(path))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			latencies = append(latencies, in)
		default:
			in, err := UDPMonOf(doc.Sweep, filepath.Base(path))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			sweeps = append(sweeps, in)
		}
	}
	switch kind {
	case "timeline":
		return CompareTimelines(labels, timelines)
	case "latency":
		return CompareLatency(labels, latencies)
	default:
		return CompareUDPMon(labels, sweeps)
	}
}
