package udpflow

import (
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

// resident counts the pages of b the kernel has mapped (mincore).
func resident(t *testing.T, b []byte) (in, all int) {
	t.Helper()
	page := uintptr(os.Getpagesize())
	first := uintptr(unsafe.Pointer(&b[0]))
	start := first &^ (page - 1) // mincore wants a page-aligned start
	length := first - start + uintptr(len(b))
	vec := make([]byte, (length+page-1)/page)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, start, length, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Skipf("mincore: %v", e)
	}
	for _, v := range vec {
		if v&1 != 0 {
			in++
		}
	}
	return in, len(vec)
}

// A receiver's buffers are mapped when it is made, not by its first
// reads during the test.
func TestReceiveBuffersArePrefaulted(t *testing.T) {
	_, b := loopback.UDPPair(t)
	bio, err := newBatchIO(b, 1448, true)
	if err != nil {
		t.Fatal(err)
	}
	io := bio.(*linuxIO)
	for i, m := range io.recvMsgs {
		if in, all := resident(t, m.Buffers[0]); in != all {
			t.Errorf("receive buffer %d: %d of %d pages mapped", i, in, all)
		}
	}
	segs := io.segs[:cap(io.segs)]
	seg := unsafe.Slice((*byte)(unsafe.Pointer(&segs[0])), len(segs)*int(unsafe.Sizeof(segs[0])))
	if in, all := resident(t, seg); in != all {
		t.Errorf("segment array: %d of %d pages mapped", in, all)
	}
}

// prefault maps every page of a fresh buffer.
func TestPrefaultMapsEveryPage(t *testing.T) {
	mem, err := unix.Mmap(-1, 0, 64<<10, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer unix.Munmap(mem)
	if in, all := resident(t, mem); in != 0 {
		t.Fatalf("a fresh mapping has %d of %d pages mapped before prefault", in, all)
	}
	prefault(mem)
	if in, all := resident(t, mem); in != all {
		t.Errorf("after prefault %d of %d pages mapped", in, all)
	}
}
