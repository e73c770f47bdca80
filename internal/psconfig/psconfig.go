// Package psconfig reads a perfSONAR pSConfig template (JSON: addresses,
// groups, tests, schedules and tasks) and writes the mesh file (package
// mesh) that schedules the same tests between the same hosts. What a
// mesh file can't carry (archives, tools, priorities, jq templates,
// includes, address classes …) is named in one warning line a key, and
// nothing is dropped silently. The conversion is a pure function of the
// template's bytes.
package psconfig

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Import is a converted template: the mesh file's YAML and the warnings,
// one line each, for what the mesh doesn't carry.
type Import struct {
	YAML     []byte
	Warnings []string
	Mesh     File // what YAML says, for tests and callers
}

// template is the decoded top level: each section a map of named JSON
// objects, read key by key so that an unknown key is a warning.
type template struct {
	Addresses map[string]json.RawMessage `json:"addresses"`
	Groups    map[string]json.RawMessage `json:"groups"`
	Tests     map[string]json.RawMessage `json:"tests"`
	Schedules map[string]json.RawMessage `json:"schedules"`
	Tasks     map[string]json.RawMessage `json:"tasks"`
	Classes   map[string]json.RawMessage `json:"address-classes"`
}

// warnings gathers "what is left behind" by key, so that a key carried
// by many objects is one line naming them.
type warnings struct {
	byKey map[string][]string // key → where it was, in order
	order []string
	notes map[string]string // key → why it isn't carried
	lines []string          // warnings that are lines on their own
}

func newWarnings() *warnings {
	return &warnings{byKey: map[string][]string{}, notes: map[string]string{}}
}

// dropped records that `where` carried `key`, which the mesh can't.
func (w *warnings) dropped(key, where, why string) {
	if _, ok := w.byKey[key]; !ok {
		w.order = append(w.order, key)
		w.notes[key] = why
	}
	w.byKey[key] = append(w.byKey[key], where)
}

func (w *warnings) linef(format string, args ...any) {
	w.lines = append(w.lines, fmt.Sprintf(format, args...))
}

// list is every warning line: per-object lines first, then one per key.
func (w *warnings) list() []string {
	out := append([]string(nil), w.lines...)
	for _, k := range w.order {
		where := w.byKey[k]
		shown := where
		if len(shown) > 4 {
			shown = append(append([]string(nil), where[:4]...), fmt.Sprintf("and %d more", len(where)-4))
		}
		out = append(out, fmt.Sprintf("%s (%s): %s", k, strings.Join(shown, ", "), w.notes[k]))
	}
	return out
}

// Convert reads a pSConfig template and returns its mesh file. name is
// the mesh's name (the tasks' origin). An error means a template this
// importer can't read at all (bad JSON, over a limit, a field of the
// wrong type, no task left to carry); anything it reads but can't carry
// is a warning. With an error, the Import (when not nil) holds only the
// warnings gathered before it.
func Convert(name string, data []byte) (*Import, error) {
	if err := checkJSON(data); err != nil {
		return nil, fmt.Errorf("pSConfig template: %w", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("pSConfig template: want a JSON object: %v", err)
	}
	w := newWarnings()
	var t template
	for _, k := range sortedKeys(top) {
		var dst *map[string]json.RawMessage
		switch k {
		case "addresses":
			dst = &t.Addresses
		case "groups":
			dst = &t.Groups
		case "tests":
			dst = &t.Tests
		case "schedules":
			dst = &t.Schedules
		case "tasks":
			dst = &t.Tasks
		case "archives":
			w.dropped(k, "top level", "wireperf's daemons store their results in the mesh's own archive")
			continue
		case "hosts":
			w.dropped(k, "top level", "host-level archives, tags and flags have no mesh equivalent")
			continue
		case "includes":
			w.dropped(k, "top level", "included templates are not fetched; import each file on its own")
			continue
		case "address-classes":
			dst = &t.Classes
		case "contexts", "subtasks", "_meta":
			w.dropped(k, "top level", "no mesh equivalent")
			continue
		default:
			w.dropped(k, "top level", "not a pSConfig key")
			continue
		}
		if err := json.Unmarshal(top[k], dst); err != nil {
			return nil, fmt.Errorf("pSConfig template: %s: want an object of named entries", k)
		}
	}
	for _, need := range []struct {
		key string
		m   map[string]json.RawMessage
	}{{"addresses", t.Addresses}, {"groups", t.Groups}, {"tests", t.Tests}, {"tasks", t.Tasks}} {
		if len(need.m) == 0 {
			return nil, fmt.Errorf("pSConfig template: no %s", need.key)
		}
	}
	c := &converter{w: w, hostByRef: map[string]string{}, usedHosts: map[string]bool{}}
	f, err := c.convert(name, &t)
	if err != nil {
		// The warnings say what was left out on the way to the error.
		return &Import{Warnings: w.list()}, fmt.Errorf("pSConfig template: %w", err)
	}
	out, err := f.YAML()
	if err != nil {
		return nil, err
	}
	return &Import{YAML: out, Warnings: w.list(), Mesh: *f}, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
