// Command pkgbuild makes wireperf's release archives, .deb and .rpm packages and SHA256SUMS
// from what `make dist`, `make deb` and `make rpm` built (see packaging/README.md). It also
// writes the container image (`make image`) and unpacks one as a runtime bundle (the package
// test).
//
//	go run ./internal/pkgbuild/cmd/pkgbuild archive -version V -epoch E -platform linux_amd64 -stage dist/stage -out dist
//	go run ./internal/pkgbuild/cmd/pkgbuild package -format deb -arch amd64 -version V -epoch E -stage dist/stage -out dist
//	go run ./internal/pkgbuild/cmd/pkgbuild image -arch amd64 -version V -epoch E -stage dist/stage -out dist
//	go run ./internal/pkgbuild/cmd/pkgbuild bundle IMAGE.oci.tar DIR   # the image as an OCI runtime bundle
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/pkgbuild"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "pkgbuild:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("say what to make: archive, package, image or bundle")
	}
	if args[0] == "bundle" {
		// The package test runs the image's own contents with systemd-nspawn --oci-bundle.
		if len(args) != 3 {
			return fmt.Errorf("bundle IMAGE.oci.tar DIR")
		}
		return pkgbuild.WriteBundle(args[1], args[2])
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	version := fs.String("version", "", "the release")
	epoch := fs.String("epoch", "", "SOURCE_DATE_EPOCH: every time stamp in the artefact")
	stage := fs.String("stage", "dist/stage", "what make built: PLATFORM/wireperf[.exe], man/, completions/")
	out := fs.String("out", "dist", "where the artefacts go")
	platform := fs.String("platform", "", "archive: GOOS_GOARCH")
	format := fs.String("format", "", "package: deb or rpm")
	arch := fs.String("arch", "", "package, image: GOARCH")
	config := fs.String("config", "packaging/nfpm.yaml", "package: nfpm's description")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *version == "" {
		return fmt.Errorf("-version is required")
	}
	secs, err := strconv.ParseInt(*epoch, 10, 64)
	if err != nil {
		return fmt.Errorf("-epoch %q: want seconds since 1970", *epoch)
	}
	mtime := time.Unix(secs, 0).UTC()
	var made string
	switch args[0] {
	case "archive":
		made, err = archive(*stage, *out, *platform, *version, mtime)
	case "package":
		made, err = pkgbuild.Package{
			Config: *config, Format: *format, Arch: *arch, Version: *version,
			Binary: filepath.Join(*stage, "linux_"+*arch, "wireperf"), ManDir: filepath.Join(*stage, "man"),
			CompletionsDir: filepath.Join(*stage, "completions"), License: "LICENSE", Readme: "README.md",
			Stage: filepath.Join(*stage, *format+"_"+*arch), OutDir: *out, MTime: mtime,
		}.Build()
	case "image":
		// The image's binary is static (stage/static_ARCH): it has no dynamic loader.
		im := pkgbuild.Image{Binary: filepath.Join(*stage, "static_"+*arch, "wireperf"), Arch: *arch, Version: *version, MTime: mtime}
		made = filepath.Join(*out, "wireperf_"+*version+"_linux_"+*arch+".oci.tar")
		err = im.WriteOCIArchive(made)
	default:
		return fmt.Errorf("unknown command %q: want archive, package, image or bundle", args[0])
	}
	if err != nil {
		return err
	}
	fmt.Println(made)
	return pkgbuild.WriteSums(*out)
}

// archive packs one platform's binary with the man pages, completions, LICENSE and README.
func archive(stage, out, platform, version string, mtime time.Time) (string, error) {
	goos, _, ok := strings.Cut(platform, "_")
	if !ok {
		return "", fmt.Errorf("-platform %q: want GOOS_GOARCH", platform)
	}
	exe := "wireperf"
	if goos == "windows" {
		exe += ".exe"
	}
	entries := []pkgbuild.Entry{
		{Src: filepath.Join(stage, platform, exe), Name: exe, Mode: 0o755},
		{Src: "LICENSE", Name: "LICENSE", Mode: 0o644},
		{Src: "README.md", Name: "README.md", Mode: 0o644},
	}
	pages, err := filepath.Glob(filepath.Join(stage, "man", "*.1"))
	if err != nil || len(pages) == 0 {
		return "", fmt.Errorf("no man pages in %s", filepath.Join(stage, "man"))
	}
	for _, m := range pages {
		entries = append(entries, pkgbuild.Entry{Src: m, Name: "man/man1/" + filepath.Base(m), Mode: 0o644})
	}
	for _, c := range []string{"wireperf.bash", "_wireperf", "wireperf.fish", "wireperf.ps1"} {
		entries = append(entries, pkgbuild.Entry{Src: filepath.Join(stage, "completions", c), Name: "completions/" + c, Mode: 0o644})
	}
	name := "wireperf_" + version + "_" + platform
	if goos == "windows" {
		dst := filepath.Join(out, name+".zip")
		return dst, pkgbuild.WriteZip(dst, name, entries, mtime)
	}
	dst := filepath.Join(out, name+".tar.gz")
	return dst, pkgbuild.WriteTarGz(dst, name, entries, mtime)
}
