package group

import (
	"fmt"
	"time"

	"github.com/wireperf/wireperf/internal/units"
	"github.com/wireperf/wireperf/internal/yamlfile"
)

// FileOptions are test flags as a group file writes them: every field is
// optional, and a pair's override the file's.
type FileOptions struct {
	Time     *string `yaml:"time"`
	Interval *string `yaml:"interval"`
	Omit     *string `yaml:"omit"`
	Parallel *int    `yaml:"parallel"`
	Bitrate  *string `yaml:"bitrate"`
	UDP      *bool   `yaml:"udp"`
	Reverse  *bool   `yaml:"reverse"`
	Bidir    *bool   `yaml:"bidir"`
	Window   *string `yaml:"window"`
	Length   *string `yaml:"length"`
}

// FilePair is one pair of a group file.
type FilePair struct {
	Sender      string `yaml:"sender"`
	Receiver    string `yaml:"receiver"`
	FileOptions `yaml:",inline"`
}

// File is a group file (-f).
type File struct {
	AgentKeyFile string     `yaml:"agent-key-file"`
	StartIn      string     `yaml:"start-in"`
	Pairs        []FilePair `yaml:"pairs"`
	FileOptions  `yaml:",inline"`
}

// FileLimits are a group file's limits: far over any group a controller
// starts at one instant, and under what a hostile file could cost.
var FileLimits = yamlfile.Limits{Bytes: 1 << 20, Nodes: 100000, ValueLen: 1024, Depth: 16}

// ReadFile reads a group file. Its mistakes, unknown keys among them,
// are *yamlfile.Error values naming line and column.
func ReadFile(path string) (*File, error) {
	doc, err := yamlfile.ReadFile(path, FileLimits)
	if err != nil {
		return nil, err
	}
	if doc.Root == nil {
		return nil, doc.Errorf(nil, "", "empty file")
	}
	var f File
	if err := doc.Decode(&f); err != nil {
		return nil, err
	}
	return &f, nil
}

// Apply lays the set fields over o.
func (fo FileOptions) Apply(o Options) (Options, error) {
	dur := func(s *string, d *time.Duration, key string) error {
		if s == nil {
			return nil
		}
		v, err := units.ParseDuration(*s)
		if err != nil {
			return fmt.Errorf("%s: %v", key, err)
		}
		*d = v
		return nil
	}
	size := func(s *string, n *int64, key string) error {
		if s == nil {
			return nil
		}
		v, err := units.ParseSize(*s)
		if err != nil {
			return fmt.Errorf("%s: %v", key, err)
		}
		*n = v
		return nil
	}
	if err := dur(fo.Time, &o.Duration, "time"); err != nil {
		return o, err
	}
	if err := dur(fo.Interval, &o.Interval, "interval"); err != nil {
		return o, err
	}
	if err := dur(fo.Omit, &o.Omit, "omit"); err != nil {
		return o, err
	}
	if err := size(fo.Window, &o.Window, "window"); err != nil {
		return o, err
	}
	if err := size(fo.Length, &o.Length, "length"); err != nil {
		return o, err
	}
	if fo.Parallel != nil {
		o.Parallel = *fo.Parallel
	}
	if fo.Bitrate != nil {
		o.Bitrate = *fo.Bitrate
	}
	if fo.UDP != nil {
		o.UDP = *fo.UDP
	}
	if fo.Reverse != nil {
		o.Reverse = *fo.Reverse
	}
	if fo.Bidir != nil {
		o.Bidir = *fo.Bidir
	}
	return o, nil
}

// PairsOf turns the file's pairs into pairs, each over base with the
// file's options and then its own; ports default to defPort.
func (f *File) PairsOf(base Options, defPort int) ([]Pair, error) {
	fileOpts, err := f.FileOptions.Apply(base)
	if err != nil {
		return nil, err
	}
	var pairs []Pair
	for i, fp := range f.Pairs {
		where := fmt.Sprintf("pairs[%d]", i)
		if fp.Sender == "" || fp.Receiver == "" {
			return nil, fmt.Errorf("%s: want sender and receiver", where)
		}
		p, err := NewPair(fp.Sender, fp.Receiver, defPort)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		o, err := fp.FileOptions.Apply(fileOpts)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		if p.Spec, err = o.Spec(); err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		pairs = append(pairs, p)
	}
	return pairs, nil
}

// NewPair reads a pair's two endpoints.
func NewPair(sender, receiver string, defPort int) (Pair, error) {
	s, err := ParseEndpoint(sender, defPort)
	if err != nil {
		return Pair{}, fmt.Errorf("sender %v", err)
	}
	r, err := ParseEndpoint(receiver, defPort)
	if err != nil {
		return Pair{}, fmt.Errorf("receiver %v", err)
	}
	return Pair{Sender: s, Receiver: r}, nil
}
