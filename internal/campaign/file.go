package campaign

import (
	"errors"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/wireperf/wireperf/internal/units"
	"github.com/wireperf/wireperf/internal/yamlfile"
)

// A campaign file's limits, checked before anything else: its size, and
// any one value's. The runs it makes are bounded by MaxRuns (Validate).
const (
	MaxFileSize  = 1 << 20
	MaxScalarLen = 1024
	MaxNodes     = 100000
	MaxDepth     = 16 // mappings and lists inside one another (a file needs 3)
)

// FileLimits are the file's limits as the reader takes them.
var FileLimits = yamlfile.Limits{Bytes: MaxFileSize, Nodes: MaxNodes, ValueLen: MaxScalarLen, Depth: MaxDepth}

var fileKeys = []string{"name", "target", "targets", "port", "repeat", "order", "shuffle_key", "pause", "count", "test", "axes", "flags"}

// ParseFile reads a campaign file (YAML; docs/campaigns.md). Every mistake
// is a *yamlfile.Error naming the line, the column and the key: an
// unknown key, an axis value that does not parse, an axis given twice.
func ParseFile(name string, data []byte) (*Spec, error) {
	doc, err := yamlfile.Read(name, data, FileLimits)
	if err != nil {
		return nil, err
	}
	ferr := doc.Errorf
	if doc.Root == nil {
		return nil, ferr(nil, "", "empty campaign file")
	}
	root := doc.Root
	if root.Kind != yaml.MappingNode {
		return nil, ferr(root, "", "want a mapping of keys (%s)", strings.Join(fileKeys, ", "))
	}
	entries, err := doc.Mapping(root, "", fileKeys...)
	if err != nil {
		return nil, err
	}
	s := &Spec{Repeat: 1, Order: OrderShuffle}
	for _, e := range entries {
		key, v := e.Key, e.Value
		switch key {
		case "name":
			val, err := doc.Scalar(v, key)
			if err != nil {
				return nil, err
			}
			s.Name = val
		case "target":
			val, err := doc.Scalar(v, key)
			if err != nil {
				return nil, err
			}
			s.Targets = append(s.Targets, val)
		case "targets":
			list, err := stringList(v)
			if err != nil {
				return nil, ferr(v, key, "%v", err)
			}
			s.Targets = append(s.Targets, list...)
		case "port":
			val, err := doc.Scalar(v, key)
			if err != nil {
				return nil, err
			}
			p, err := strconv.Atoi(val)
			if err != nil || p < 1 || p > 65535 {
				return nil, ferr(v, key, "%q: want 1 to 65535", val)
			}
			s.Port = p
		case "repeat":
			val, err := doc.Scalar(v, key)
			if err != nil {
				return nil, err
			}
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > MaxRuns {
				return nil, ferr(v, key, "%q: want 1 to %d", val, MaxRuns)
			}
			s.Repeat = n
		case "order":
			val, err := doc.Scalar(v, key)
			if err != nil {
				return nil, err
			}
			if val != OrderShuffle && val != OrderSequential {
				return nil, ferr(v, key, "%q: want shuffle or sequential", val)
			}
			s.Order = val
		case "shuffle_key":
			val, err := doc.Scalar(v, key)
			if err != nil {
				return nil, err
			}
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n == 0 {
				return nil, ferr(v, key, "%q: want a non-zero whole number", val)
			}
			s.ShuffleKey = n
		case "test":
			val, err := doc.Scalar(v, key)
			if err != nil {
				return nil, err
			}
			if val != TestClient && val != TestRR {
				return nil, ferr(v, key, "%q: want client or rr", val)
			}
			s.Test = val
		case "count":
			val, err := doc.Scalar(v, key)
			if err != nil {
				return nil, err
			}
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n < 1 || n > 1e12 {
				return nil, ferr(v, key, "%q: want a number of datagrams per run", val)
			}
			s.Count = n
		case "pause":
			val, err := doc.Scalar(v, key)
			if err != nil {
				return nil, err
			}
			d, err := units.ParseDuration(val)
			if err != nil {
				return nil, ferr(v, key, "%v", err)
			}
			s.Pause = d
		case "axes":
			axes, err := parseAxes(v, ferr)
			if err != nil {
				return nil, err
			}
			s.Axes = axes
		case "flags":
			fixed, err := parseFlags(v, ferr)
			if err != nil {
				return nil, err
			}
			s.Fixed = fixed
		}
	}
	if err := s.Validate(); err != nil {
		return nil, ferr(root, "", "%v", err)
	}
	return s, nil
}

// ferrFunc is yamlfile.Doc.Errorf: an error at a node, about a key.
type ferrFunc func(n *yaml.Node, key, format string, args ...any) error

func parseAxes(v *yaml.Node, ferr ferrFunc) ([]AxisValues, error) {
	if v.Kind != yaml.MappingNode {
		return nil, ferr(v, "axes", "want a mapping of axis names to lists of values")
	}
	var out []AxisValues
	seen := map[string]int{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, vals := v.Content[i], v.Content[i+1]
		name, ok := CanonicalAxis(k.Value)
		key := "axes." + k.Value
		if !ok {
			return nil, ferr(k, key, "unknown axis (axes: %s)", strings.Join(AxisNames(), ", "))
		}
		if line, dup := seen[name]; dup {
			return nil, ferr(k, key, "axis %s is given twice (first on line %d)", name, line)
		}
		seen[name] = k.Line
		var list []*yaml.Node
		switch vals.Kind {
		case yaml.SequenceNode:
			list = vals.Content
		case yaml.ScalarNode: // a comma list, as on the command line
			for _, part := range strings.Split(vals.Value, ",") {
				list = append(list, &yaml.Node{Kind: yaml.ScalarNode, Value: part, Line: vals.Line})
			}
		default:
			return nil, ferr(vals, key, "want a list of values")
		}
		a := AxisValues{Name: name}
		for _, n := range list {
			if n.Kind != yaml.ScalarNode {
				return nil, ferr(n, key, "want a single value in the list")
			}
			val, err := ParseValue(name, n.Value)
			if err != nil {
				return nil, ferr(n, key, "%v", err)
			}
			a.Values = append(a.Values, val)
		}
		if len(a.Values) == 0 {
			return nil, ferr(vals, key, "no values")
		}
		out = append(out, a)
	}
	return out, nil
}

// parseFlags turns the flags mapping into client flags (--name=value), in
// name order so that the same file gives the same command line.
func parseFlags(v *yaml.Node, ferr ferrFunc) ([]string, error) {
	if v.Kind != yaml.MappingNode {
		return nil, ferr(v, "flags", "want a mapping of client flags to values")
	}
	type kv struct{ k, v string }
	var flags []kv
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		key := "flags." + k.Value
		if val.Kind != yaml.ScalarNode {
			return nil, ferr(val, key, "want a single value")
		}
		name := strings.TrimLeft(k.Value, "-")
		if name == "" {
			return nil, ferr(k, key, "empty flag name")
		}
		flags = append(flags, kv{name, val.Value})
	}
	sort.Slice(flags, func(i, j int) bool { return flags[i].k < flags[j].k })
	out := make([]string, 0, len(flags))
	for _, f := range flags {
		if len(f.k) == 1 {
			out = append(out, "-"+f.k+"="+f.v)
		} else {
			out = append(out, "--"+f.k+"="+f.v)
		}
	}
	return out, nil
}

func stringList(v *yaml.Node) ([]string, error) {
	if v.Kind == yaml.ScalarNode {
		return strings.Split(v.Value, ","), nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, errors.New("want a list")
	}
	var out []string
	for _, n := range v.Content {
		if n.Kind != yaml.ScalarNode {
			return nil, errors.New("want a list of names")
		}
		out = append(out, n.Value)
	}
	return out, nil
}
