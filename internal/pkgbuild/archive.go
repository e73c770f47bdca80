// Package pkgbuild makes wireperf's release artefacts (archives, .deb and .rpm packages, the
// SHA256SUMS list) byte for byte the same from the same tree: every time stamp is the release's
// epoch, every owner root, every list sorted.
package pkgbuild

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"time"
)

// Entry is one file of an archive: Src on disk, Name inside the archive (slash-separated,
// relative), and its mode.
type Entry struct {
	Src  string
	Name string
	Mode fs.FileMode
}

func sorted(entries []Entry) []Entry {
	out := append([]Entry(nil), entries...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// dirs lists the directories the entries need, parents first, so that an archive unpacks with
// the same modes whatever the unpacker's umask.
func dirs(entries []Entry) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range entries {
		for d := path.Dir(e.Name); d != "." && d != "/" && !seen[d]; d = path.Dir(d) {
			seen[d] = true
			out = append(out, d)
		}
	}
	sort.Strings(out) // a parent sorts before its children
	return out
}

// WriteTarGz writes entries under the directory prefix into a gzipped tar at dst.
func WriteTarGz(dst, prefix string, entries []Entry, mtime time.Time) error {
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	gz, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		f.Close()
		return err
	}
	gz.ModTime = mtime // the gzip header's own time, else zero: either is reproducible
	tw := tar.NewWriter(gz)
	hdr := func(name string, mode fs.FileMode, size int64, typ byte) *tar.Header {
		return &tar.Header{Name: name, Mode: int64(mode.Perm()), Size: size, Typeflag: typ, ModTime: mtime,
			Uname: "root", Gname: "root", Format: tar.FormatPAX}
	}
	entries = sorted(entries)
	err = func() error {
		if err := tw.WriteHeader(hdr(prefix+"/", 0o755, 0, tar.TypeDir)); err != nil {
			return err
		}
		for _, d := range dirs(entries) {
			if err := tw.WriteHeader(hdr(prefix+"/"+d+"/", 0o755, 0, tar.TypeDir)); err != nil {
				return err
			}
		}
		for _, e := range entries {
			data, err := os.ReadFile(e.Src)
			if err != nil {
				return err
			}
			if err := tw.WriteHeader(hdr(prefix+"/"+e.Name, e.Mode, int64(len(data)), tar.TypeReg)); err != nil {
				return err
			}
			if _, err := tw.Write(data); err != nil {
				return err
			}
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return gz.Close()
	}()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	return nil
}

// WriteZip writes entries under the directory prefix into a zip at dst (the Windows archive).
func WriteZip(dst, prefix string, entries []Entry, mtime time.Time) error {
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	err = func() error {
		for _, e := range sorted(entries) {
			data, err := os.ReadFile(e.Src)
			if err != nil {
				return err
			}
			h := &zip.FileHeader{Name: prefix + "/" + e.Name, Method: zip.Deflate, Modified: mtime.UTC()}
			h.SetMode(e.Mode)
			w, err := zw.CreateHeader(h)
			if err != nil {
				return err
			}
			if _, err := w.Write(data); err != nil {
				return err
			}
		}
		return zw.Close()
	}()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	return nil
}

// GzipFile writes src gzipped at the highest level to dst, with no name or time in the header
// (as Debian wants its man pages and docs).
func GzipFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	gz, err := gzip.NewWriterLevel(out, gzip.BestCompression)
	if err != nil {
		out.Close()
		return err
	}
	_, err = io.Copy(gz, in)
	if cerr := gz.Close(); err == nil {
		err = cerr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
