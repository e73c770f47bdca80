package advise

import (
	"bytes"
	"encoding/json"
)

// JSON is the report as `wireperf advise -J` prints it and --save stores
// it: indented, with <, > and & as they are.
func (r *Report) JSON() ([]byte, error) {
	var doc bytes.Buffer
	enc := json.NewEncoder(&doc)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return doc.Bytes(), nil
}
