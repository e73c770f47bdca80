package tcpflow

import (
	"io"
	"os"
)

// zeroSource is a file of zeros that a sender hands to the kernel with
// sendfile (-Z): the pages go to the socket without a copy from user
// space, as iperf3 -Z does.
type zeroSource struct {
	f  *os.File
	fd uintptr // f's descriptor, taken once (os.File.Fd is not free)
	n  int
}

// newZeroSource makes a file of n zero bytes, in memory where it can.
func newZeroSource(n int) (*zeroSource, error) {
	f, err := memFile()
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(int64(n)); err != nil {
		f.Close()
		return nil, err
	}
	return &zeroSource{f: f, fd: f.Fd(), n: n}, nil
}

// reader returns the first n bytes of the file from its start, in a form
// (*io.LimitedReader of an *os.File) that net.TCPConn.ReadFrom sends with
// sendfile.
func (z *zeroSource) reader(n int) (io.Reader, error) {
	if _, err := z.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return &io.LimitedReader{R: z.f, N: int64(min(n, z.n))}, nil
}

func (z *zeroSource) close() { _ = z.f.Close() }
