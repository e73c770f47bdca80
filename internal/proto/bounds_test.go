package proto

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

// A peer that announces MaxFrame and sends a few bytes costs a few KiB,
// not the announced megabyte.
func TestReadFrameAllocatesAsBytesArrive(t *testing.T) {
	hdr := binary.BigEndian.AppendUint32(nil, MaxFrame)
	hdr = append(hdr, byte(TypeInterval))
	before := heapAlloc()
	for range 64 {
		in := io.MultiReader(bytes.NewReader(hdr), strings.NewReader(`{"streams":[`))
		if _, err := ReadFrame(in); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("err = %v, want unexpected EOF", err)
		}
	}
	if per := (heapAlloc() - before) / 64; per > 64<<10 {
		t.Fatalf("a truncated 1 MiB frame cost %d bytes each; want under 64 KiB", per)
	}
}

func TestReadFrameWholeBodyInPieces(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 3*readChunk+17)
	var buf bytes.Buffer
	buf.Write(binary.BigEndian.AppendUint32(nil, uint32(len(body)+1)))
	buf.WriteByte(byte(TypeError))
	buf.Write(body)
	fr, err := ReadFrame(io.LimitReader(&oneByteReader{&buf}, int64(buf.Len())))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fr.Body, body) {
		t.Fatalf("body of %d bytes, want %d", len(fr.Body), len(body))
	}
}

type oneByteReader struct{ r io.Reader }

func (o *oneByteReader) Read(p []byte) (int, error) {
	if len(p) > 1000 {
		p = p[:1000]
	}
	return o.r.Read(p)
}

func TestCheckShape(t *testing.T) {
	ok := []string{
		`{}`, `[]`, `{"a":[1,2,3],"b":"[[[[,,,"}`, `{"s":"\"]"}`,
		`[` + strings.Repeat(`{},`, MaxArrayElements-1) + `{}]`,
	}
	for _, s := range ok {
		if err := CheckShape([]byte(s)); err != nil {
			t.Errorf("CheckShape(%.40q) = %v, want nil", s, err)
		}
	}
	bad := []string{
		`{"streams":[` + strings.Repeat(`{},`, MaxArrayElements) + `{}]}`,
		strings.Repeat(`[`, MaxDepth+1) + strings.Repeat(`]`, MaxDepth+1),
		`[` + strings.Repeat(`[1,1,1,1],`, MaxArrayElements/4) + `[1]]`,
	}
	for _, s := range bad {
		if err := CheckShape([]byte(s)); !errors.Is(err, ErrShape) {
			t.Errorf("CheckShape(%.40q) = %v, want ErrShape", s, err)
		}
	}
}

// A 1 MiB body of empty objects is refused before it is decoded.
func TestDecodeRefusesAmplification(t *testing.T) {
	body := []byte(`{"streams":[` + strings.Repeat(`{},`, 300000) + `{}]}`)
	var v struct{ Streams []struct{ ID int } }
	if err := (Frame{Type: TypeInterval, Body: body}).Decode(&v); !errors.Is(err, ErrShape) {
		t.Fatalf("Decode = %v, want ErrShape", err)
	}
}

func FuzzCheckShape(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":[]}],"c":"x\"y"}`))
	f.Fuzz(func(t *testing.T, b []byte) { _ = CheckShape(b) })
}
