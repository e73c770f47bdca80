# Common tasks. `make test` is what CI runs after `go vet`.
GO       ?= go
FUZZTIME ?= 30s
BIN      ?= wireperf

.PHONY: all build test vet cross bench fuzz selftest clean

all: vet build test

build:
	$(GO) build -o $(BIN) ./cmd/wireperf

vet:
	$(GO) vet ./...

# The lab's tests measure timing through a user-space router; they run
# after the rest, on their own, so that other packages' tests do not
# compete with them for the two cores.
LAB_PKGS := ./internal/lab/...
test:
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v /internal/lab)
	$(GO) test -race -count=1 -p 1 $(LAB_PKGS)

cross:
	GOOS=darwin $(GO) build ./...
	GOOS=windows $(GO) build ./...

selftest:
	$(GO) run ./cmd/wireperf selftest

# Side-by-side speed runs against iperf3 on loopback; see bench/RESULTS.md.
bench: build
	$(GO) test -run '^$$' -bench . -benchtime 1x ./internal/...
	./bench/tcp.sh ./$(BIN)

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
