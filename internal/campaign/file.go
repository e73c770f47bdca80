package campaign

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/wireperf/wireperf/internal/units"
)

// FileError is a campaign file's mistake, with where it is.
type FileError struct {
	File string
	Line int
	Key  string
	Msg  string
}

func (e *FileError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Key != "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

// A campaign file's limits, checked before anything else: its size, and
// any one value's. The runs it makes are bounded by MaxRuns (Validate).
const (
	MaxFileSize  = 1 << 20
	MaxScalarLen = 1024
	MaxNodes     = 100000
)

var fileKeys = []string{"name", "target", "targets", "port", "repeat", "order", "shuffle_key", "pause", "count", "test", "axes", "flags"}

// ParseFile reads a campaign file (YAML; docs/campaigns.md). Every mistake
// is a *FileError naming the line and the key: an unknown key, an axis
// value that does not parse, an axis given twice.
func ParseFile(name string, data []byte) (*Spec, error) {
	ferr := func(n *yaml.Node, key, format string, args ...any) error {
		line := 0
		if n != nil {
			line = n.Line
		}
		return &FileError{File: name, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	if len(data) > MaxFileSize {
		return nil, ferr(nil, "", "%d bytes, over the limit of %d", len(data), MaxFileSize)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return nil, ferr(nil, "", "%s", strings.Join(te.Errors, "; "))
		}
		return nil, ferr(nil, "", "%v", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil, ferr(nil, "", "empty campaign file")
	}
	nodes := 0
	var walk func(n *yaml.Node) error
	walk = func(n *yaml.Node) error {
		if nodes++; nodes > MaxNodes {
			return ferr(n, "", "more than %d values, over the limit", MaxNodes)
		}
		if n.Kind == yaml.AliasNode {
			return ferr(n, "", "aliases (*name) are not taken")
		}
		if len(n.Value) > MaxScalarLen {
			return ferr(n, "", "a value of %d bytes, over the limit of %d", len(n.Value), MaxScalarLen)
		}
		for _, c := range n.Content {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(&doc); err != nil {
		return nil, err
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, ferr(root, "", "want a mapping of keys (%s)", strings.Join(fileKeys, ", "))
	}
	s := &Spec{Repeat: 1, Order: OrderShuffle}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		key := k.Value
		if seen[key] {
			return nil, ferr(k, key, "given twice")
		}
		seen[key] = true
		scalar := func() (string, error) {
			if v.Kind != yaml.ScalarNode {
				return "", ferr(v, key, "want a single value")
			}
			return v.Value, nil
		}
		switch key {
		case "name":
			val, err := scalar()
			if err != nil {
				return nil, err
			}
			s.Name = val
		case "target":
			val, err := scalar()
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
			val, err := scalar()
			if err != nil {
				return nil, err
			}
			p, err := strconv.Atoi(val)
			if err != nil || p < 1 || p > 65535 {
				return nil, ferr(v, key, "%q: want 1 to 65535", val)
			}
			s.Port = p
		case "repeat":
			val, err := scalar()
			if err != nil {
				return nil, err
			}
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > MaxRuns {
				return nil, ferr(v, key, "%q: want 1 to %d", val, MaxRuns)
			}
			s.Repeat = n
		case "order":
			val, err := scalar()
			if err != nil {
				return nil, err
			}
			if val != OrderShuffle && val != OrderSequential {
				return nil, ferr(v, key, "%q: want shuffle or sequential", val)
			}
			s.Order = val
		case "shuffle_key":
			val, err := scalar()
			if err != nil {
				return nil, err
			}
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n == 0 {
				return nil, ferr(v, key, "%q: want a non-zero whole number", val)
			}
			s.ShuffleKey = n
		case "test":
			val, err := scalar()
			if err != nil {
				return nil, err
			}
			if val != TestClient && val != TestRR {
				return nil, ferr(v, key, "%q: want client or rr", val)
			}
			s.Test = val
		case "count":
			val, err := scalar()
			if err != nil {
				return nil, err
			}
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n < 1 || n > 1e12 {
				return nil, ferr(v, key, "%q: want a number of datagrams per run", val)
			}
			s.Count = n
		case "pause":
			val, err := scalar()
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
		default:
			return nil, ferr(k, key, "unknown key (keys: %s)", strings.Join(fileKeys, ", "))
		}
	}
	if err := s.Validate(); err != nil {
		return nil, ferr(root, "", "%v", err)
	}
	return s, nil
}

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
	seen := map[string]bool{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		key := "flags." + k.Value
		if seen[k.Value] {
			return nil, ferr(k, key, "given twice")
		}
		seen[k.Value] = true
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
