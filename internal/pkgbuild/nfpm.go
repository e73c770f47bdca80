package pkgbuild

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb" // registers the deb packager
	_ "github.com/goreleaser/nfpm/v2/rpm" // registers the rpm packager
	"go.yaml.in/yaml/v3"
)

// Package is one .deb or .rpm to build from packaging/nfpm.yaml.
type Package struct {
	Config         string // nfpm's YAML, e.g. packaging/nfpm.yaml
	Format         string // "deb" or "rpm"
	Arch           string // GOARCH: amd64, arm64
	Version        string // the release, e.g. 0.1.0 or 0.0.0~git20261206155913.38d3e3b1f0c2
	Binary         string // the linux/Arch binary
	ManDir         string // wireperf man's *.1 pages
	CompletionsDir string // wireperf.bash, _wireperf, wireperf.fish
	License        string // LICENSE
	Readme         string // README.md
	Stage          string // a scratch directory for this package's files (emptied first)
	OutDir         string // where the package is written
	MTime          time.Time
}

// Build stages the package's generated files (gzipped man pages, the Debian copyright file,
// the changelog), runs nfpm and returns the package's path.
func (p Package) Build() (string, error) {
	if p.Format != "deb" && p.Format != "rpm" {
		return "", fmt.Errorf("package format %q: want deb or rpm", p.Format)
	}
	if err := p.stage(); err != nil {
		return "", fmt.Errorf("staging the %s: %w", p.Format, err)
	}
	vars := map[string]string{"VERSION": p.Version, "ARCH": p.Arch, "STAGE": p.Stage}
	var unknown []string
	cfg, err := nfpm.ParseFileWithEnvMapping(p.Config, func(name string) string {
		v, ok := vars[name]
		if !ok && !strings.HasPrefix(name, "NFPM_") { // nfpm asks for its signing passphrases: none
			unknown = append(unknown, name)
		}
		return v
	})
	if err != nil {
		return "", fmt.Errorf("%s: %w", p.Config, err)
	}
	if len(unknown) > 0 {
		return "", fmt.Errorf("%s: unknown variables %s (want VERSION, ARCH, STAGE)", p.Config, strings.Join(unknown, ", "))
	}
	info, err := cfg.Get(p.Format)
	if err != nil {
		return "", err
	}
	info.MTime = p.MTime
	if p.Format == "deb" {
		info.Changelog = filepath.Join(p.Stage, "changelog.yml")
		if err := os.WriteFile(info.Changelog, p.changelog(info.Version+"-"+info.Release), 0o644); err != nil {
			return "", err
		}
	}
	info = nfpm.WithDefaults(info)
	if err := nfpm.PrepareForPackager(info, p.Format); err != nil {
		return "", err
	}
	packager, err := nfpm.Get(p.Format)
	if err != nil {
		return "", err
	}
	target := filepath.Join(p.OutDir, packager.ConventionalFileName(info))
	info.Target = target
	f, err := os.Create(target)
	if err != nil {
		return "", err
	}
	if err := packager.Package(info, f); err != nil {
		f.Close()
		os.Remove(target)
		return "", fmt.Errorf("nfpm %s: %w", p.Format, err)
	}
	return target, f.Close()
}

func (p Package) stage() error {
	if err := os.RemoveAll(p.Stage); err != nil {
		return err
	}
	for _, d := range []string{"man", "completions"} {
		if err := os.MkdirAll(filepath.Join(p.Stage, d), 0o755); err != nil {
			return err
		}
	}
	if err := copyFile(p.Binary, filepath.Join(p.Stage, "wireperf"), 0o755); err != nil {
		return err
	}
	pages, err := filepath.Glob(filepath.Join(p.ManDir, "*.1"))
	if err != nil {
		return err
	}
	if len(pages) == 0 {
		return fmt.Errorf("no man pages in %s", p.ManDir)
	}
	for _, m := range pages {
		if err := GzipFile(m, filepath.Join(p.Stage, "man", filepath.Base(m)+".gz")); err != nil {
			return err
		}
	}
	for _, c := range []string{"wireperf.bash", "_wireperf", "wireperf.fish"} {
		if err := copyFile(filepath.Join(p.CompletionsDir, c), filepath.Join(p.Stage, "completions", c), 0o644); err != nil {
			return err
		}
	}
	if err := GzipFile(p.Readme, filepath.Join(p.Stage, "README.md.gz")); err != nil {
		return err
	}
	license, err := os.ReadFile(p.License)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(p.Stage, "copyright"), DebianCopyright(string(license)), 0o644); err != nil {
		return err
	}
	return nil
}

// DebianCopyright is the machine-readable debian/copyright for the MIT licence text given.
func DebianCopyright(license string) []byte {
	var notice []string
	var body []string
	for _, l := range strings.Split(strings.TrimSpace(license), "\n") {
		l = strings.TrimRight(l, " \t")
		if strings.HasPrefix(l, "Copyright") {
			notice = append(notice, strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(l, "Copyright"), " (c)")))
			continue
		}
		body = append(body, l)
	}
	// The licence's text, less its title and notice, as a paragraph field: each line
	// indented, blank lines written as " .".
	for len(body) > 0 && (body[0] == "" || strings.HasSuffix(body[0], "License")) {
		body = body[1:]
	}
	var b strings.Builder
	b.WriteString("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n")
	b.WriteString("Upstream-Name: wireperf\nSource: https://github.com/wireperf/wireperf\n\n")
	b.WriteString("Files: *\nCopyright: " + strings.Join(notice, "\n ") + "\nLicense: Expat\n")
	for _, l := range body {
		if l == "" {
			b.WriteString(" .\n")
		} else {
			b.WriteString(" " + l + "\n")
		}
	}
	return []byte(b.String())
}

// changelog is the one entry nfpm writes as changelog.Debian.gz: the project's own history is
// CHANGELOG.md in the source.
func (p Package) changelog(version string) []byte {
	type change struct {
		Note string `yaml:"note"`
	}
	type deb struct {
		Urgency       string   `yaml:"urgency"`
		Distributions []string `yaml:"distributions"`
	}
	type entry struct {
		Semver   string   `yaml:"semver"`
		Date     string   `yaml:"date"`
		Packager string   `yaml:"packager"`
		Deb      deb      `yaml:"deb"`
		Changes  []change `yaml:"changes"`
	}
	out, _ := yaml.Marshal([]entry{{
		Semver: version, Deb: deb{Urgency: "medium", Distributions: []string{"unstable"}}, Date: p.MTime.UTC().Format(time.RFC3339), Packager: "wireperf developers <wireperf@example.org>",
		Changes: []change{{Note: "Release " + p.Version + "."}},
	}})
	return out
}

func copyFile(src, dst string, mode os.FileMode) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, mode)
}
