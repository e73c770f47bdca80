package pkgbuild

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// The same inputs give the same bytes whatever the files' own times, and the archive holds
// what it was given under its prefix, sorted, with the modes asked.
func TestTarGzIsReproducible(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"bin": "binary", "page": "man page", "README": "readme"})
	entries := []Entry{
		{Src: filepath.Join(dir, "page"), Name: "man/man1/wireperf.1", Mode: 0o644},
		{Src: filepath.Join(dir, "bin"), Name: "wireperf", Mode: 0o755},
		{Src: filepath.Join(dir, "README"), Name: "README.md", Mode: 0o644},
	}
	mtime := time.Unix(1765000000, 0)
	a, b := filepath.Join(dir, "a.tar.gz"), filepath.Join(dir, "b.tar.gz")
	if err := WriteTarGz(a, "wireperf_1_linux_amd64", entries, mtime); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, "bin"), time.Now(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := WriteTarGz(b, "wireperf_1_linux_amd64", []Entry{entries[2], entries[0], entries[1]}, mtime); err != nil {
		t.Fatal(err)
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if !bytes.Equal(da, db) {
		t.Fatal("two archives of the same files differ")
	}
	gz, err := gzip.NewReader(bytes.NewReader(da))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(mtime) || h.Uid != 0 || h.Uname != "root" {
			t.Errorf("%s: time %v owner %d/%s", h.Name, h.ModTime, h.Uid, h.Uname)
		}
		got = append(got, h.Name+" "+os.FileMode(h.Mode).String())
	}
	want := []string{
		"wireperf_1_linux_amd64/ -rwxr-xr-x",
		"wireperf_1_linux_amd64/man/ -rwxr-xr-x",
		"wireperf_1_linux_amd64/man/man1/ -rwxr-xr-x",
		"wireperf_1_linux_amd64/README.md -rw-r--r--",
		"wireperf_1_linux_amd64/man/man1/wireperf.1 -rw-r--r--",
		"wireperf_1_linux_amd64/wireperf -rwxr-xr-x",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("archive holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestZipIsReproducible(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"exe": "binary"})
	e := []Entry{{Src: filepath.Join(dir, "exe"), Name: "wireperf.exe", Mode: 0o755}}
	mtime := time.Unix(1765000000, 0)
	a, b := filepath.Join(dir, "a.zip"), filepath.Join(dir, "b.zip")
	if err := WriteZip(a, "p", e, mtime); err != nil {
		t.Fatal(err)
	}
	if err := WriteZip(b, "p", e, mtime); err != nil {
		t.Fatal(err)
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if !bytes.Equal(da, db) {
		t.Fatal("two zips of the same files differ")
	}
}

// SHA256SUMS lists the artefacts only, sorted, in sha256sum's format.
func TestWriteSums(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"b.deb": "", "a.tar.gz": "abc", "notes.txt": "x"})
	if err := WriteSums(dir); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	want := "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  a.tar.gz\n" +
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  b.deb\n"
	if string(got) != want {
		t.Errorf("SHA256SUMS:\n%s\nwant\n%s", got, want)
	}
}

func TestDebianCopyright(t *testing.T) {
	license := "MIT License\n\nCopyright (c) 2026 The wireperf authors\n\nPermission is granted.\n\nNo warranty.\n"
	got := string(DebianCopyright(license))
	for _, want := range []string{
		"Files: *\nCopyright: 2026 The wireperf authors\nLicense: Expat\n",
		" Permission is granted.\n .\n No warranty.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("copyright lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "MIT License") {
		t.Errorf("the licence's title is in its text:\n%s", got)
	}
}
