SHELL := /bin/bash
# Common tasks. `make test` is what CI runs after `go vet`.
GO       ?= go
FUZZTIME ?= 30s
BIN      ?= wireperf
BUILDDIR ?= build

.PHONY: all build test vet cross bench fuzz selftest clean man completions pkgmap dist stage deb rpm image package-test

all: vet build test

# Built as the packages are (no cgo, a static binary), so that `make bench`
# measures what users run: a cgo build's threads are glibc's, registered
# for rseq, which costs each return to user space a little.
build:
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/wireperf

vet:
	$(GO) vet ./...

# The acceptance tests that measure rates and delays through the lab's
# user-space router run again after the rest, on their own and without the
# race detector, which would slow the router and the measured stacks
# alike (they skip their timing checks under -race; the lab package runs
# only here).
#
# The server's soak (bench/soak.sh, SOAK_SECS long) runs beside the race
# pass: it checks that the server's live heap, descriptors and goroutines
# do not grow under normal, failing and hostile clients (bench/soakjudge:
# a least-squares trend over all samples, docs/gates.md), which load
# widens the interval of but does not move, and it must be over before
# the timed pass starts. The
# daemons' 3-minute mesh lab (internal/daemon's TestLabMesh, which skips
# under -race) runs beside the race pass too, without the detector: its
# figure is the schedule's own lag (a run's start after its hosts were
# free), which the load of the race pass leaves well under its 2 s bound,
# and running it there keeps the suite under 15 minutes. bench/mesh-scale's
# simulation (200 daemons against the test PostgreSQL, its lag held to
# 2 s) skips under -race and runs in the timed pass, as does the truth
# matrix's command cells (bench/truth's TestCommandCellsSubset, about 2.5
# minutes with its build).
TIMED_PKGS := ./internal/lab ./internal/rr ./internal/udpmon ./internal/group ./bench/mesh-scale ./bench/truth
# The archive's query-plan tests fill SQLite with 100,000 rows, which under
# the race detector (instrumenting SQLite's Go code) took 2 minutes of the
# race pass; they skip there and run here, in seconds.
UNRACED_RUN := ^(TestPlannerQueriesUseIndexes|TestGridQueriesReadWhatTheyShow)$$
# The daemon's API at docs/daemon.md's 1,000-host scale (5,000 tasks):
# its figures (pages' sizes, CPU, RSS) are the detector-free daemon's.
UNRACED_DAEMON_RUN := ^TestAPIAtScale$$
# A trend's interval narrows as the soak's length to the power 1.5: at
# 300 s (27 samples of 10 s after the warm-up) a clean server's live-heap
# slope read within ±11 to ±45 KB per test (99%) on the 2-vCPU VM at a
# load average of 20 to 64 (up to six soaks side by side), so a leak of
# 30 to 100 KB per test is caught (a soakleak build's 64 KiB: 6 of 6),
# and the soak still ends well inside the race pass. At 180 s the
# interval would be twice as wide. docs/gates.md has the runs.
SOAK_SECS  ?= 300
test:
	@mkdir -p $(BUILDDIR)
	$(GO) build -o $(BUILDDIR)/wireperf-soak ./cmd/wireperf
	$(GO) build -o $(BUILDDIR)/soakjudge ./bench/soakjudge
	@echo "soak: bench/soak.sh for $(SOAK_SECS) s beside the race pass"
	@echo "mesh lab: internal/daemon's TestLabMesh beside the race pass"
	@SOAKJUDGE=$(BUILDDIR)/soakjudge bash bench/soak.sh $(BUILDDIR)/wireperf-soak $(SOAK_SECS) 30 >$(BUILDDIR)/soak.log 2>&1 & soak=$$!; \
	$(GO) test -count=1 -run '^TestLabMesh$$' -v ./internal/daemon >$(BUILDDIR)/mesh.log 2>&1 & mesh=$$!; \
	rc=0; $(GO) test -race -count=1 $$($(GO) list ./... | grep -v '/internal/lab$$') || rc=$$?; \
	echo "== race pass: $$SECONDS s"; \
	if wait $$soak; then echo "== soak: no growth"; else echo "== soak: FAILED"; rc=1; fi; \
	cat $(BUILDDIR)/soak.log; \
	if wait $$mesh; then echo "== mesh lab: passed ($$SECONDS s)"; grep -E 'lag|runs by state|overlap' $(BUILDDIR)/mesh.log; \
	else echo "== mesh lab: FAILED"; cat $(BUILDDIR)/mesh.log; rc=1; fi; exit $$rc
	@SECONDS=0; rc=0; $(GO) test -count=1 -p 1 $(TIMED_PKGS) || rc=$$?; \
	$(GO) test -count=1 -run '$(UNRACED_RUN)' ./internal/archive || rc=$$?; \
	$(GO) test -count=1 -run '$(UNRACED_DAEMON_RUN)' ./internal/daemon || rc=$$?; echo "== timed pass: $$SECONDS s"; exit $$rc

cross:
	GOOS=darwin $(GO) build ./...
	GOOS=windows $(GO) build ./...

selftest:
	$(GO) run ./cmd/wireperf selftest

# The package map of docs/architecture.md, rewritten from the packages'
# doc comments; internal/repocheck's TestPackageMap fails until it is
# rerun after a package is added, removed or moved, or the first sentence
# of its doc comment changes.
pkgmap:
	$(GO) run ./internal/repocheck/cmd/pkgmap

# Man pages and shell completions, generated from the command definitions
# into $(BUILDDIR) (not committed). The pages carry the last commit's date,
# so they change only when the code does.
man: build
	SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct 2>/dev/null || date +%s) ./$(BIN) man $(BUILDDIR)/man

completions: build
	mkdir -p $(BUILDDIR)/completions
	./$(BIN) completion bash > $(BUILDDIR)/completions/wireperf.bash
	./$(BIN) completion zsh > $(BUILDDIR)/completions/_wireperf
	./$(BIN) completion fish > $(BUILDDIR)/completions/wireperf.fish
	./$(BIN) completion powershell > $(BUILDDIR)/completions/wireperf.ps1

# Side-by-side speed runs against iperf3 on loopback; see bench/RESULTS.md.
bench: build
	$(GO) test -run '^$$' -bench . -benchtime 1x ./internal/...
	./bench/tcp.sh ./$(BIN)
	./bench/udp.sh ./$(BIN)
	./bench/rr.sh ./$(BIN)

# Every fuzz target, one after another, for FUZZTIME each.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "fuzz $$pkg $$f"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg >/dev/null; \
		done; \
	done

clean:
	rm -f $(BIN)
	rm -rf $(DIST)

# Release artefacts (packaging/README.md). Every one is the same bytes from
# the same tree: -trimpath, no build ID, no cgo, and every time stamp the
# last commit's (SOURCE_DATE_EPOCH). The release is the tag on HEAD
# (v1.2.3 -> 1.2.3), else 0.0.0~gitDATE.COMMIT, a version Debian and RPM
# both sort before any release; `wireperf version` reports it with the
# commit and whether the tree had uncommitted changes.
DIST     ?= dist
STAGE    := $(DIST)/stage
# Read once, when make starts (:=), so that a commit made during a build
# does not change them half-way.
SOURCE_DATE_EPOCH := $(or $(SOURCE_DATE_EPOCH),$(shell git log -1 --format=%ct 2>/dev/null || echo 0))
COMMIT   := $(or $(COMMIT),$(shell git rev-parse HEAD 2>/dev/null))
MODIFIED := $(or $(MODIFIED),$(shell if [ -n "$$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then echo true; else echo false; fi))
ifeq ($(origin VERSION),undefined)
VERSION := $(shell git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null | sed 's/^v//')
ifeq ($(VERSION),)
VERSION := 0.0.0~git$(shell date -u -d @$(SOURCE_DATE_EPOCH) +%Y%m%d%H%M%S).$(shell git rev-parse --short=12 HEAD 2>/dev/null)
endif
endif
VERSION_PKG := github.com/wireperf/wireperf/internal/version
RELEASE_LDFLAGS := -s -w -buildid= -X $(VERSION_PKG).Version=$(VERSION) -X $(VERSION_PKG).Commit=$(COMMIT) -X $(VERSION_PKG).Modified=$(MODIFIED)
RELEASE_BUILD = CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -ldflags '$(RELEASE_LDFLAGS)'
PKGBUILD = $(GO) run ./internal/pkgbuild/cmd/pkgbuild
PKGBUILD_FLAGS = -version '$(VERSION)' -epoch $(SOURCE_DATE_EPOCH) -stage $(STAGE) -out $(DIST)
LINUX_ARCHES  := amd64 arm64
CLIENT_PLATFORMS := darwin_amd64 darwin_arm64 windows_amd64
HOST_PLATFORM := $(shell $(GO) env GOOS)_$(shell $(GO) env GOARCH)
export SOURCE_DATE_EPOCH

# The linux binaries (position-independent, as Debian builds its own, for
# address-space randomisation), and the man pages and completions (written by this
# machine's binary: they are the same for every platform).
stage:
	@mkdir -p $(STAGE)
	@for arch in $(LINUX_ARCHES); do \
		echo "build linux/$$arch"; \
		GOOS=linux GOARCH=$$arch $(RELEASE_BUILD) -buildmode=pie -o $(STAGE)/linux_$$arch/wireperf ./cmd/wireperf || exit 1; \
	done
	@[ -x $(STAGE)/$(HOST_PLATFORM)/wireperf ] || $(RELEASE_BUILD) -o $(STAGE)/$(HOST_PLATFORM)/wireperf ./cmd/wireperf
	@rm -rf $(STAGE)/man $(STAGE)/completions && mkdir -p $(STAGE)/completions
	@$(STAGE)/$(HOST_PLATFORM)/wireperf man $(STAGE)/man >/dev/null
	@for sh in bash zsh fish powershell; do \
		case $$sh in bash) f=wireperf.bash;; zsh) f=_wireperf;; fish) f=wireperf.fish;; powershell) f=wireperf.ps1;; esac; \
		$(STAGE)/$(HOST_PLATFORM)/wireperf completion $$sh > $(STAGE)/completions/$$f || exit 1; \
	done

dist: stage
	@for p in $(CLIENT_PLATFORMS); do \
		os=$${p%_*}; arch=$${p#*_}; ext=; [ $$os = windows ] && ext=.exe; \
		echo "build $$os/$$arch"; \
		GOOS=$$os GOARCH=$$arch $(RELEASE_BUILD) -o $(STAGE)/$$p/wireperf$$ext ./cmd/wireperf || exit 1; \
	done
	@for p in $(addprefix linux_,$(LINUX_ARCHES)) $(CLIENT_PLATFORMS); do $(PKGBUILD) archive $(PKGBUILD_FLAGS) -platform $$p || exit 1; done
	@cat $(DIST)/SHA256SUMS

deb rpm: stage
	@for arch in $(LINUX_ARCHES); do $(PKGBUILD) package $(PKGBUILD_FLAGS) -format $@ -arch $$arch || exit 1; done
	@cat $(DIST)/SHA256SUMS

# The container image, an OCI archive per arch (wireperf_VERSION_linux_ARCH.oci.tar) that
# podman load and docker load read, written by pkgbuild with no daemon and no network: the
# static binary (not PIE: the empty base has no dynamic loader), running `wireperf -s` as
# 65532:65532.
image:
	@for arch in $(LINUX_ARCHES); do \
		echo "build linux/$$arch (static)"; \
		GOOS=linux GOARCH=$$arch $(RELEASE_BUILD) -o $(STAGE)/static_$$arch/wireperf ./cmd/wireperf || exit 1; \
		$(PKGBUILD) image $(PKGBUILD_FLAGS) -arch $$arch || exit 1; \
	done
	@cat $(DIST)/SHA256SUMS

# Installs the .deb into a booted Debian bookworm container and runs it
# there (packaging/test/package-test.sh); root, a few minutes.
package-test:
	$(MAKE) --no-print-directory deb image LINUX_ARCHES=$(shell $(GO) env GOARCH)
	bash packaging/test/package-test.sh
