package cli

import (
	"fmt"
	"io"
	"os"
)

// readFileAtMost reads a file the user named, refusing one larger than
// max without reading it all: a limit checked after reading would come
// after the memory was spent.
func readFileAtMost(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: over the limit of %d bytes", path, max)
	}
	return data, nil
}
