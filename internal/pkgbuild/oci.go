package pkgbuild

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// The OCI media types an image archive uses.
const (
	MediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	MediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	MediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	MediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// ImageUID is the image's user and group: not root, and no user of a usual host (distroless's
// "nonroot" number).
const ImageUID = 65532

// ImageStateDir is where the image's daemon keeps its archive and spool, as the package does
// (XDG_DATA_HOME and XDG_STATE_HOME are /var/lib): owned by the image's user, a volume.
const ImageStateDir = "/var/lib/wireperf"

// Image is a container image of one static binary on an empty base, written as an OCI image
// layout in a tar (what `podman load`, `docker load` and `skopeo copy oci-archive:` read).
type Image struct {
	Binary  string    // the linux binary: static, since the image has no dynamic loader
	Arch    string    // its GOARCH, which OCI's architecture names alike
	Version string    // the release; the image's tag is it with + and ~ made -
	MTime   time.Time // every time stamp (SOURCE_DATE_EPOCH)
}

// Tag is the image's tag: the release, in the characters a tag may hold.
func (im Image) Tag() string {
	return strings.NewReplacer("~", "-", "+", "-").Replace(im.Version)
}

// Descriptor points at a blob by digest (OCI image spec, descriptor.md).
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Index is index.json, the layout's entry point.
type Index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []Descriptor `json:"manifests"`
}

// Manifest names an image's config and layers.
type Manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        Descriptor   `json:"config"`
	Layers        []Descriptor `json:"layers"`
}

// ImageConfig is the image's configuration blob (OCI image spec, config.md).
type ImageConfig struct {
	Created      string         `json:"created"`
	Architecture string         `json:"architecture"`
	OS           string         `json:"os"`
	Config       RuntimeConfig  `json:"config"`
	RootFS       RootFS         `json:"rootfs"`
	History      []HistoryEntry `json:"history"`
}

// RuntimeConfig is what a runtime does with the image by default.
type RuntimeConfig struct {
	User         string              `json:"User"`
	ExposedPorts map[string]struct{} `json:"ExposedPorts"`
	Env          []string            `json:"Env"`
	Entrypoint   []string            `json:"Entrypoint"`
	Cmd          []string            `json:"Cmd"`
	WorkingDir   string              `json:"WorkingDir"`
	Volumes      map[string]struct{} `json:"Volumes"`
	Labels       map[string]string   `json:"Labels"`
}

// RootFS lists the layers' uncompressed digests.
type RootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

// HistoryEntry says how a layer was made.
type HistoryEntry struct {
	Created   string `json:"created"`
	CreatedBy string `json:"created_by"`
}

// dockerManifest is the manifest.json `docker save` writes beside the OCI layout, which
// docker load before version 25 reads instead of index.json.
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// Config is the image's configuration: `wireperf -s` as the image's user, the test server's
// ports and the daemon's API port declared, the state directory a volume.
func (im Image) Config(diffID string) ImageConfig {
	created := im.MTime.UTC().Format(time.RFC3339)
	return ImageConfig{
		Created: created, Architecture: im.Arch, OS: "linux",
		Config: RuntimeConfig{
			User:         fmt.Sprintf("%d:%d", ImageUID, ImageUID),
			ExposedPorts: map[string]struct{}{"5201/tcp": {}, "5201/udp": {}, "5280/tcp": {}},
			Env:          []string{"PATH=/usr/bin", "HOME=" + ImageStateDir, "XDG_DATA_HOME=/var/lib", "XDG_STATE_HOME=/var/lib"},
			Entrypoint:   []string{"/usr/bin/wireperf"},
			Cmd:          []string{"-s"},
			WorkingDir:   ImageStateDir,
			Volumes:      map[string]struct{}{ImageStateDir: {}},
			Labels: map[string]string{
				"org.opencontainers.image.title":    "wireperf",
				"org.opencontainers.image.version":  im.Version,
				"org.opencontainers.image.created":  created,
				"org.opencontainers.image.licenses": "MIT",
			},
		},
		RootFS:  RootFS{Type: "layers", DiffIDs: []string{diffID}},
		History: []HistoryEntry{{Created: created, CreatedBy: "internal/pkgbuild: the static binary, /etc/passwd and /etc/group, " + ImageStateDir}},
	}
}

// Layer is the image's one layer, an uncompressed tar: the binary, a passwd and group naming
// the image's user (for tools that show names) and root, the state directory and /tmp.
func (im Image) Layer() ([]byte, error) {
	bin, err := os.ReadFile(im.Binary)
	if err != nil {
		return nil, err
	}
	u := fmt.Sprint(ImageUID)
	passwd := "root:x:0:0:root:/root:/sbin/nologin\nwireperf:x:" + u + ":" + u + ":wireperf:" + ImageStateDir + ":/sbin/nologin\n"
	group := "root:x:0:\nwireperf:x:" + u + ":\n"
	type file struct {
		name     string
		mode     int64 // with the sticky bit, which fs.FileMode keeps elsewhere
		uid      int
		data     []byte
		typeflag byte
	}
	dir := func(name string, mode int64, uid int) file {
		return file{name: name + "/", mode: mode, uid: uid, typeflag: tar.TypeDir}
	}
	reg := func(name string, mode int64, data []byte) file {
		return file{name: name, mode: mode, data: data, typeflag: tar.TypeReg}
	}
	// In tar order: each directory before what it holds.
	files := []file{
		dir("etc", 0o755, 0),
		reg("etc/group", 0o644, []byte(group)),
		reg("etc/passwd", 0o644, []byte(passwd)),
		dir("tmp", 0o1777, 0),
		dir("usr", 0o755, 0),
		dir("usr/bin", 0o755, 0),
		reg("usr/bin/wireperf", 0o755, bin),
		dir("var", 0o755, 0),
		dir("var/lib", 0o755, 0),
		dir("var/lib/wireperf", 0o750, ImageUID),
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Typeflag: f.typeflag, Mode: f.mode, Size: int64(len(f.data)),
			Uid: f.uid, Gid: f.uid, ModTime: im.MTime, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// Blobs makes the image's blobs, each keyed by its digest, and the index that points at them.
func (im Image) Blobs() (Index, map[string][]byte, error) {
	layer, err := im.Layer()
	if err != nil {
		return Index{}, nil, err
	}
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return Index{}, nil, err
	}
	if _, err := zw.Write(layer); err != nil {
		return Index{}, nil, err
	}
	if err := zw.Close(); err != nil {
		return Index{}, nil, err
	}
	config, err := json.Marshal(im.Config(digest(layer)))
	if err != nil {
		return Index{}, nil, err
	}
	manifest, err := json.Marshal(Manifest{
		SchemaVersion: 2, MediaType: MediaTypeManifest,
		Config: Descriptor{MediaType: MediaTypeConfig, Digest: digest(config), Size: int64(len(config))},
		Layers: []Descriptor{{MediaType: MediaTypeLayer, Digest: digest(gz.Bytes()), Size: int64(gz.Len())}},
	})
	if err != nil {
		return Index{}, nil, err
	}
	blobs := map[string][]byte{digest(gz.Bytes()): gz.Bytes(), digest(config): config, digest(manifest): manifest}
	index := Index{SchemaVersion: 2, MediaType: MediaTypeIndex, Manifests: []Descriptor{{
		MediaType: MediaTypeManifest, Digest: digest(manifest), Size: int64(len(manifest)),
		Annotations: map[string]string{
			"org.opencontainers.image.ref.name": im.Tag(),
			"io.containerd.image.name":          "docker.io/library/wireperf:" + im.Tag(),
		},
	}}}
	return index, blobs, nil
}

// WriteOCIArchive writes the image at dst as an OCI layout in a tar: oci-layout, index.json,
// blobs/sha256/…, and docker's manifest.json.
func (im Image) WriteOCIArchive(dst string) error {
	index, blobs, err := im.Blobs()
	if err != nil {
		return err
	}
	man := index.Manifests[0]
	var m Manifest
	if err := json.Unmarshal(blobs[man.Digest], &m); err != nil {
		return err
	}
	blobPath := func(d string) string { return "blobs/sha256/" + strings.TrimPrefix(d, "sha256:") }
	indexJSON, err := json.Marshal(index)
	if err != nil {
		return err
	}
	dockerJSON, err := json.Marshal([]dockerManifest{{Config: blobPath(m.Config.Digest),
		RepoTags: []string{"wireperf:" + im.Tag()}, Layers: []string{blobPath(m.Layers[0].Digest)}}})
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	put := func(name string, typ byte, data []byte) error {
		mode := int64(0o644)
		if typ == tar.TypeDir {
			mode = 0o755
		}
		h := &tar.Header{Name: name, Typeflag: typ, Mode: mode, Size: int64(len(data)), ModTime: im.MTime,
			Uname: "root", Gname: "root", Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	steps := []struct {
		name string
		typ  byte
		data []byte
	}{
		{"blobs/", tar.TypeDir, nil},
		{"blobs/sha256/", tar.TypeDir, nil},
		{blobPath(m.Config.Digest), tar.TypeReg, blobs[m.Config.Digest]},
		{blobPath(m.Layers[0].Digest), tar.TypeReg, blobs[m.Layers[0].Digest]},
		{blobPath(man.Digest), tar.TypeReg, blobs[man.Digest]},
		{"index.json", tar.TypeReg, indexJSON},
		{"manifest.json", tar.TypeReg, dockerJSON},
		{"oci-layout", tar.TypeReg, []byte(`{"imageLayoutVersion":"1.0.0"}`)},
	}
	for _, s := range steps {
		if err := put(s.name, s.typ, s.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(dst, buf.Bytes(), 0o644); err != nil {
		os.Remove(dst)
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	return nil
}
