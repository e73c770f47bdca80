package proto

import (
	"errors"
	"fmt"
)

// Bounds on a frame's JSON shape. The largest legitimate body, a final
// report with a TCP timeline, holds a few thousand array elements at a
// depth under ten.
const (
	MaxDepth         = 32
	MaxArrayElements = 16384 // over all the arrays of one body
)

// ErrShape is a body whose shape is over the bounds.
var ErrShape = errors.New("message shape over the limits")

// CheckShape scans a JSON body, without decoding it, and refuses one
// nested deeper than MaxDepth or with more than MaxArrayElements array
// elements in all. A 1 MiB body of empty objects would otherwise decode to
// tens of megabytes.
func CheckShape(b []byte) error {
	depth, elems := 0, 0
	// open[d] says whether the container at depth d is an array, and
	// empty[d] whether it has no element yet.
	var open, empty [MaxDepth + 1]bool
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			inString = true
		case '[', '{':
			if depth > 0 && open[depth] && empty[depth] {
				elems++
				empty[depth] = false
			}
			depth++
			if depth > MaxDepth {
				return fmt.Errorf("%w: nested deeper than %d", ErrShape, MaxDepth)
			}
			open[depth], empty[depth] = c == '[', true
			continue
		case ']', '}':
			if depth > 0 {
				depth--
			}
			continue
		case ',':
			if depth > 0 && open[depth] {
				elems++
			}
			continue
		}
		// The first character of a value (or a string) in an array that
		// had no element counts it.
		if depth > 0 && open[depth] && empty[depth] {
			elems++
			empty[depth] = false
		}
		if elems > MaxArrayElements {
			break
		}
	}
	if elems > MaxArrayElements {
		return fmt.Errorf("%w: more than %d array elements", ErrShape, MaxArrayElements)
	}
	return nil
}
