package psconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// A template's limits, checked by walking its tokens before anything is
// decoded, so that no file can make the importer spend unbounded time or
// memory. They are the mesh file's (package mesh) where both have one.
const (
	MaxFileSize  = 4 << 20 // bytes
	MaxTokens    = 200000  // JSON values, keys and delimiters
	MaxDepth     = 32      // nested objects and arrays
	MaxStringLen = 64 << 10
)

// checkJSON refuses what the decoder would take silently: a second value
// for one key (encoding/json keeps the last), trailing data, depth,
// size and strings over the limits. It names the path of the fault.
func checkJSON(data []byte) error {
	if len(data) > MaxFileSize {
		return fmt.Errorf("%d bytes, over the limit of %d", len(data), MaxFileSize)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]bool
		path   string
		index  int
		key    string // the object's current key, once read
		await  bool   // an object awaits its next key
	}
	var stack []*frame
	tokens := 0
	where := func() string {
		if len(stack) == 0 {
			return "the document"
		}
		var b strings.Builder
		for _, f := range stack {
			if f.object {
				if f.key != "" {
					b.WriteString("." + f.key)
				}
			} else {
				b.WriteString("[" + strconv.Itoa(f.index) + "]")
			}
		}
		if b.Len() == 0 {
			return "the document"
		}
		return strings.TrimPrefix(b.String(), ".")
	}
	// value marks the end of one value in the enclosing container.
	value := func() {
		if len(stack) == 0 {
			return
		}
		top := stack[len(stack)-1]
		if top.object {
			top.await = true
		} else {
			top.index++
		}
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("at %s: %v", where(), err)
		}
		if tokens++; tokens > MaxTokens {
			return fmt.Errorf("more than %d JSON tokens", MaxTokens)
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.await {
			switch d := tok.(type) {
			case json.Delim: // '}'
				stack = stack[:len(stack)-1]
				value()
				_ = d
			case string:
				if len(d) > MaxStringLen {
					return fmt.Errorf("at %s: a key of %d bytes, over the limit of %d", where(), len(d), MaxStringLen)
				}
				if top.keys[d] {
					top.key = d
					return fmt.Errorf("at %s: the key %q twice in one object", where(), d)
				}
				top.keys[d] = true
				top.key = d
				top.await = false
			}
			continue
		}
		switch d := tok.(type) {
		case json.Delim:
			switch d {
			case '{', '[':
				if len(stack) >= MaxDepth {
					return fmt.Errorf("at %s: nested deeper than %d", where(), MaxDepth)
				}
				stack = append(stack, &frame{object: d == '{', keys: map[string]bool{}, await: d == '{'})
			case ']':
				stack = stack[:len(stack)-1]
				value()
			}
		case string:
			if len(d) > MaxStringLen {
				return fmt.Errorf("at %s: a string of %d bytes, over the limit of %d", where(), len(d), MaxStringLen)
			}
			value()
		default:
			value()
		}
		if len(stack) == 0 && tokens > 0 {
			// One document: anything after it is an error.
			if _, err := dec.Token(); !errors.Is(err, io.EOF) {
				return errors.New("data after the template's closing brace")
			}
			return nil
		}
	}
	if tokens == 0 {
		return errors.New("empty: want a pSConfig template (a JSON object)")
	}
	return nil
}
