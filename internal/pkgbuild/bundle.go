package pkgbuild

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// ReadOCIArchive reads an OCI archive of one image with one layer, as WriteOCIArchive writes,
// checking every blob against its digest and size; it returns the image's config and its layer
// (still gzipped).
func ReadOCIArchive(src string) (ImageConfig, []byte, error) {
	f, err := os.Open(src)
	if err != nil {
		return ImageConfig{}, nil, err
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return ImageConfig{}, nil, fmt.Errorf("%s: %w", src, err)
		}
		if h.Typeflag == tar.TypeReg {
			if files[h.Name], err = io.ReadAll(tr); err != nil {
				return ImageConfig{}, nil, fmt.Errorf("%s: %w", src, err)
			}
		}
	}
	blob := func(d Descriptor) ([]byte, error) {
		b, ok := files["blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:")]
		if !ok || digest(b) != d.Digest || int64(len(b)) != d.Size {
			return nil, fmt.Errorf("%s: blob %s missing or not its digest and size", src, d.Digest)
		}
		return b, nil
	}
	var index Index
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		return ImageConfig{}, nil, fmt.Errorf("%s: index.json names not one manifest", src)
	}
	mb, err := blob(index.Manifests[0])
	if err != nil {
		return ImageConfig{}, nil, err
	}
	var m Manifest
	if err := json.Unmarshal(mb, &m); err != nil || len(m.Layers) != 1 {
		return ImageConfig{}, nil, fmt.Errorf("%s: the manifest names not one layer", src)
	}
	cb, err := blob(m.Config)
	if err != nil {
		return ImageConfig{}, nil, err
	}
	var cfg ImageConfig
	if err := json.Unmarshal(cb, &cfg); err != nil {
		return ImageConfig{}, nil, fmt.Errorf("%s: config: %w", src, err)
	}
	layer, err := blob(m.Layers[0])
	return cfg, layer, err
}

// runtimeSpec is the part of an OCI runtime bundle's config.json that systemd-nspawn
// --oci-bundle needs to run the image's default command.
type runtimeSpec struct {
	OCIVersion string `json:"ociVersion"`
	Root       struct {
		Path     string `json:"path"`
		Readonly bool   `json:"readonly"`
	} `json:"root"`
	Process struct {
		Terminal bool `json:"terminal"`
		User     struct {
			UID int `json:"uid"`
			GID int `json:"gid"`
		} `json:"user"`
		Cwd  string   `json:"cwd"`
		Args []string `json:"args"`
		Env  []string `json:"env"`
	} `json:"process"`
	Hostname string `json:"hostname"`
}

// WriteBundle makes dir an OCI runtime bundle of the archive's image, as a container runtime
// would: the layer unpacked into dir/rootfs (read-only when run), and dir/config.json running
// the image's entrypoint and command, with its environment, as its numeric user. Owners are
// set only when run as root.
func WriteBundle(src, dir string) error {
	cfg, layer, err := ReadOCIArchive(src)
	if err != nil {
		return err
	}
	var spec runtimeSpec
	spec.OCIVersion = "1.0.0"
	spec.Root.Path, spec.Root.Readonly = "rootfs", true
	uid, gid, ok := strings.Cut(cfg.Config.User, ":")
	u, uerr := strconv.Atoi(uid)
	g, gerr := strconv.Atoi(gid)
	if !ok || uerr != nil || gerr != nil {
		return fmt.Errorf("%s: user %q is not UID:GID", src, cfg.Config.User)
	}
	spec.Process.User.UID, spec.Process.User.GID = u, g
	spec.Process.Cwd = cfg.Config.WorkingDir
	if spec.Process.Cwd == "" {
		spec.Process.Cwd = "/"
	}
	spec.Process.Args = append(append([]string{}, cfg.Config.Entrypoint...), cfg.Config.Cmd...)
	spec.Process.Env = cfg.Config.Env
	spec.Hostname = "wireperf"
	rootfs := filepath.Join(dir, "rootfs")
	if err := os.MkdirAll(rootfs, 0o755); err != nil {
		return err
	}
	if err := unpackLayer(layer, rootfs); err != nil {
		return fmt.Errorf("%s: layer: %w", src, err)
	}
	js, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), append(js, '\n'), 0o644)
}

// unpackLayer unpacks a gzipped layer of directories and regular files (all an image of ours
// holds) into root, refusing names that climb out of it.
func unpackLayer(layer []byte, root string) error {
	gz, err := gzip.NewReader(bytes.NewReader(layer))
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	asRoot := os.Geteuid() == 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(h.Name)
		if name == "." || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("%q: outside the root", h.Name)
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		mode := os.FileMode(h.Mode).Perm()
		if h.Mode&0o1000 != 0 {
			mode |= os.ModeSticky
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o700); err != nil {
				return err
			}
		case tar.TypeReg:
			w, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(w, tr)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("%q: type %q is not a directory or a file", h.Name, h.Typeflag)
		}
		if asRoot {
			if err := os.Lchown(p, h.Uid, h.Gid); err != nil {
				return err
			}
		}
		if err := os.Chmod(p, mode); err != nil {
			return err
		}
	}
}
