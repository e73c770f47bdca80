package pkgbuild

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readTar returns a tar's regular files by name, and every entry's header in order.
func readTar(t *testing.T, r io.Reader) (map[string][]byte, []*tar.Header) {
	t.Helper()
	tr := tar.NewReader(r)
	files := map[string][]byte{}
	var hdrs []*tar.Header
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, hdrs
		}
		if err != nil {
			t.Fatal(err)
		}
		hdrs = append(hdrs, h)
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[h.Name] = b
		}
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// The archive is an OCI layout whose every digest and size is its blob's, whose config runs the
// server as the non-root user with the ports declared, whose layer holds the binary and the
// user's files, and which is the same bytes however often it is written.
func TestOCIArchive(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"wireperf": "a static binary"})
	mtime := time.Unix(1765000000, 0)
	im := Image{Binary: filepath.Join(dir, "wireperf"), Arch: "arm64", Version: "0.0.0~git20261206.abc+x", MTime: mtime}
	a, b := filepath.Join(dir, "a.oci.tar"), filepath.Join(dir, "b.oci.tar")
	if err := im.WriteOCIArchive(a); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(im.Binary, time.Now(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := im.WriteOCIArchive(b); err != nil {
		t.Fatal(err)
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if !bytes.Equal(da, db) {
		t.Fatal("two archives of the same image differ")
	}

	files, hdrs := readTar(t, bytes.NewReader(da))
	for _, h := range hdrs {
		if !h.ModTime.Equal(mtime) {
			t.Errorf("%s: time %v, want %v", h.Name, h.ModTime, mtime)
		}
	}
	if got := string(files["oci-layout"]); got != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout: %s", got)
	}
	blob := func(d Descriptor) []byte {
		t.Helper()
		body, ok := files["blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:")]
		if !ok {
			t.Fatalf("no blob for %s", d.Digest)
		}
		if sha(body) != d.Digest || int64(len(body)) != d.Size {
			t.Fatalf("blob %s: digest %s size %d, descriptor says size %d", d.Digest, sha(body), len(body), d.Size)
		}
		return body
	}
	var index Index
	if err := json.Unmarshal(files["index.json"], &index); err != nil {
		t.Fatal(err)
	}
	if index.SchemaVersion != 2 || len(index.Manifests) != 1 || index.Manifests[0].MediaType != MediaTypeManifest {
		t.Fatalf("index.json: %s", files["index.json"])
	}
	if ref := index.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; ref != "0.0.0-git20261206.abc-x" {
		t.Errorf("ref.name %q: want the version as a tag", ref)
	}
	var m Manifest
	if err := json.Unmarshal(blob(index.Manifests[0]), &m); err != nil {
		t.Fatal(err)
	}
	if m.Config.MediaType != MediaTypeConfig || len(m.Layers) != 1 || m.Layers[0].MediaType != MediaTypeLayer {
		t.Fatalf("manifest: %+v", m)
	}
	var cfg ImageConfig
	if err := json.Unmarshal(blob(m.Config), &cfg); err != nil {
		t.Fatal(err)
	}
	gz, err := gzip.NewReader(bytes.NewReader(blob(m.Layers[0])))
	if err != nil {
		t.Fatal(err)
	}
	layer, err := io.ReadAll(gz)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != sha(layer) {
		t.Errorf("diff_ids %v, want the uncompressed layer's %s", cfg.RootFS.DiffIDs, sha(layer))
	}
	c := cfg.Config
	if cfg.Architecture != "arm64" || cfg.OS != "linux" || cfg.Created != "2025-12-06T05:46:40Z" {
		t.Errorf("config: %s/%s created %s", cfg.OS, cfg.Architecture, cfg.Created)
	}
	if c.User != "65532:65532" || strings.Join(c.Entrypoint, " ") != "/usr/bin/wireperf" || strings.Join(c.Cmd, " ") != "-s" {
		t.Errorf("config runs %v %v as %q, want /usr/bin/wireperf -s as 65532:65532", c.Entrypoint, c.Cmd, c.User)
	}
	for _, p := range []string{"5201/tcp", "5201/udp", "5280/tcp"} {
		if _, ok := c.ExposedPorts[p]; !ok {
			t.Errorf("port %s not declared: %v", p, c.ExposedPorts)
		}
	}

	lfiles, lhdrs := readTar(t, bytes.NewReader(layer))
	var got []string
	for _, h := range lhdrs {
		got = append(got, fmt.Sprintf("%s %o %d:%d", h.Name, h.Mode, h.Uid, h.Gid))
	}
	want := []string{
		"etc/ 755 0:0", "etc/group 644 0:0", "etc/passwd 644 0:0", "tmp/ 1777 0:0", "usr/ 755 0:0",
		"usr/bin/ 755 0:0", "usr/bin/wireperf 755 0:0", "var/ 755 0:0", "var/lib/ 755 0:0",
		"var/lib/wireperf/ 750 65532:65532",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("layer holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if string(lfiles["usr/bin/wireperf"]) != "a static binary" {
		t.Errorf("the layer's binary is %q", lfiles["usr/bin/wireperf"])
	}
	if !strings.Contains(string(lfiles["etc/passwd"]), "wireperf:x:65532:65532:") {
		t.Errorf("/etc/passwd has no wireperf user: %s", lfiles["etc/passwd"])
	}

	var dm []dockerManifest
	if err := json.Unmarshal(files["manifest.json"], &dm); err != nil {
		t.Fatal(err)
	}
	if len(dm) != 1 || dm[0].Config != "blobs/sha256/"+strings.TrimPrefix(m.Config.Digest, "sha256:") ||
		len(dm[0].Layers) != 1 || dm[0].Layers[0] != "blobs/sha256/"+strings.TrimPrefix(m.Layers[0].Digest, "sha256:") {
		t.Errorf("manifest.json: %s", files["manifest.json"])
	}
}

func TestOCIArchiveMissingBinary(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "x.oci.tar")
	err := Image{Binary: filepath.Join(t.TempDir(), "none"), Arch: "amd64", Version: "1"}.WriteOCIArchive(dst)
	if err == nil {
		t.Fatal("no error for a missing binary")
	}
	if _, serr := os.Stat(dst); serr == nil {
		t.Error("an archive was written without a binary")
	}
}

// A bundle of the image runs its entrypoint and command, with its environment, as its user,
// on its layer unpacked; a tampered blob is refused.
func TestWriteBundle(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"wireperf": "a static binary"})
	im := Image{Binary: filepath.Join(dir, "wireperf"), Arch: "amd64", Version: "1.2.3", MTime: time.Unix(1765000000, 0)}
	archive := filepath.Join(dir, "i.oci.tar")
	if err := im.WriteOCIArchive(archive); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(dir, "bundle")
	if err := WriteBundle(archive, bundle); err != nil {
		t.Fatal(err)
	}
	var spec runtimeSpec
	js, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &spec); err != nil {
		t.Fatal(err)
	}
	p := spec.Process
	if p.User.UID != ImageUID || p.User.GID != ImageUID || strings.Join(p.Args, " ") != "/usr/bin/wireperf -s" ||
		p.Cwd != ImageStateDir || spec.Root.Path != "rootfs" || !spec.Root.Readonly {
		t.Errorf("config.json: %s", js)
	}
	if got, err := os.ReadFile(filepath.Join(bundle, "rootfs/usr/bin/wireperf")); err != nil || string(got) != "a static binary" {
		t.Errorf("rootfs binary: %q %v", got, err)
	}
	if fi, err := os.Stat(filepath.Join(bundle, "rootfs/tmp")); err != nil || fi.Mode()&os.ModeSticky == 0 || fi.Mode().Perm() != 0o777 {
		t.Errorf("rootfs/tmp: %v %v", fi, err)
	}

	// The same archive with one byte of the layer (its largest blob) changed.
	data, _ := os.ReadFile(archive)
	files, _ := readTar(t, bytes.NewReader(data))
	largest := ""
	for name, body := range files {
		if strings.HasPrefix(name, "blobs/") && len(body) > len(files[largest]) {
			largest = name
		}
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, body := range files {
		if name == largest {
			body = append([]byte{}, body...)
			body[len(body)/2] ^= 1
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(body)
	}
	tw.Close()
	bad := filepath.Join(dir, "bad.oci.tar")
	if err := os.WriteFile(bad, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteBundle(bad, filepath.Join(dir, "bad")); err == nil || !strings.Contains(err.Error(), "digest") {
		t.Errorf("a tampered layer: %v, want a digest error", err)
	}
}
