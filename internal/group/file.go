package group

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/wireperf/wireperf/internal/units"
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

// ReadFile reads a group file; unknown keys are errors.
func ReadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var f File
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty file", path)
		}
		return nil, fmt.Errorf("%s: %v", path, oneLine(err))
	}
	return &f, nil
}

func oneLine(err error) string {
	return string(bytes.ReplaceAll([]byte(err.Error()), []byte("\n"), []byte("; ")))
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
