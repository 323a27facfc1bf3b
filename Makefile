# Every target installs what it needs through the Go module proxy, at a pinned version.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
BENCHSTAT   := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

COUNT    ?= 10
FUZZTIME ?= 60s
SOAK     ?= 60s
STRESS_EPISODES ?= 200000
PROPERTY_TIME ?= 200s
BENCH    ?= .
CPU      ?= 1,2

# Each contrib module has its own go.mod, so the core keeps its two dependencies.
# contrib/surfaces holds only a test that reads every operator surface, the exporters side by
# side: it is tested and linted with the others, and never released.
CONTRIB := $(patsubst %/go.mod,%,$(wildcard contrib/*/go.mod))
RELEASED := $(filter-out contrib/surfaces,$(CONTRIB))

# help, the default goal, prints what each target does: the comment above it.
.DEFAULT_GOAL := help
help:
	@awk 'NR == FNR { if (match($$0, /^[a-z-]+:/)) target[substr($$0, 1, RLENGTH - 1)] = 1; next } \
		/^# [a-z-]+ / && $$2 in target { show = 1; print "" } \
		!/^#/ { show = 0 } show { sub(/^# ?/, "  "); print }' Makefile Makefile

.PHONY: help modules core-version tidy tag test test-bench test-contrib test-all try-from-clone e2e-deps e2e screenshot stress soak bench bench-peers scenarios fuzz lint cover

# The contrib modules and the benchmark module require the core at a released version, with no
# replace directive, so that `go get` of a contrib module works for a user. Here they build
# against this checkout through the workspaces go.work (the core and contrib/*) and
# benchmarks/go.work, which replace that version with the working tree. See RELEASING.md.
CORE_VERSION := $(shell sed -n 's|^replace github.com/halfopen/breaker \(v[^ ]*\) => .*|\1|p' go.work)
MODULES := $(CONTRIB) benchmarks

# modules checks that no module a user imports has a replace directive, and that every module
# requires the core at the version the workspaces replace, CORE_VERSION.
modules:
	@test -n "$(CORE_VERSION)" || { echo "go.work does not replace the core at a version"; exit 1; }
	@for f in go.mod $(patsubst %,%/go.mod,$(CONTRIB)); do \
		if grep -q '^replace' $$f; then echo "$$f: a replace directive, which a user's build ignores"; exit 1; fi; \
	done
	@for mod in $(MODULES); do \
		v=$$(cd $$mod && go mod edit -json | grep -A1 '"Path": "github.com/halfopen/breaker"' | sed -n 's|.*"Version": "\(.*\)".*|\1|p'); \
		if [ "$$v" != "$(CORE_VERSION)" ]; then echo "$$mod requires the core at '$$v', not $(CORE_VERSION)"; exit 1; fi; \
	done
	@grep -q '^replace github.com/halfopen/breaker $(CORE_VERSION) => \.\.$$' benchmarks/go.work || \
		{ echo "benchmarks/go.work does not replace the core at $(CORE_VERSION)"; exit 1; }
	@echo "every module requires the core at $(CORE_VERSION); no replace directives"

# core-version VERSION=vX.Y.Z makes every module require the core at VERSION, and the two
# workspaces replace that version with the working tree: the first step of a release. A module
# that requires contrib modules (contrib/surfaces) requires them at VERSION too, and go.work
# replaces those with their directories.
core-version:
	@test -n "$(VERSION)" || { echo "usage: make core-version VERSION=vX.Y.Z"; exit 1; }
	@for mod in $(MODULES); do (cd $$mod && go mod edit -require=github.com/halfopen/breaker@$(VERSION) && \
		for c in $(CONTRIB); do \
			if grep -qE "^(require)?[[:space:]]+github.com/halfopen/breaker/$$c v" go.mod; then \
				go mod edit -require=github.com/halfopen/breaker/$$c@$(VERSION) || exit 1; fi; \
		done) || exit 1; done
	go work edit -dropreplace=github.com/halfopen/breaker@$(CORE_VERSION) -replace=github.com/halfopen/breaker@$(VERSION)=.
	@for c in contrib/otel contrib/prometheus; do \
		go work edit -dropreplace=github.com/halfopen/breaker/$$c@$(CORE_VERSION) \
			-replace=github.com/halfopen/breaker/$$c@$(VERSION)=./$$c || exit 1; done
	cd benchmarks && go work edit -dropreplace=github.com/halfopen/breaker@$(CORE_VERSION) -replace=github.com/halfopen/breaker@$(VERSION)=..
	@$(MAKE) --no-print-directory modules

# tidy runs go mod tidy in each contrib module and the benchmark module. go mod tidy ignores
# go.work, and the core's next version is not published yet, so each module gets replace
# directives for the run (the core's, and the other contrib modules', which contrib/surfaces
# requires), which are taken out again.
tidy:
	@for mod in $(MODULES); do \
		echo "== tidy $$mod"; \
		others=""; for c in $(CONTRIB); do [ "$$c" = "$$mod" ] || others="$$others $$c"; done; \
		(cd $$mod && go mod edit -replace=github.com/halfopen/breaker@$(CORE_VERSION)=$(CURDIR) && \
			for c in $$others; do go mod edit -replace=github.com/halfopen/breaker/$$c@$(CORE_VERSION)=$(CURDIR)/$$c; done && \
			GOWORK=off go mod tidy; rc=$$?; \
			go mod edit -dropreplace=github.com/halfopen/breaker@$(CORE_VERSION); \
			for c in $$others; do go mod edit -dropreplace=github.com/halfopen/breaker/$$c@$(CORE_VERSION); done; \
			exit $$rc) || exit 1; \
	done

# tag makes the tags of a release at HEAD: CORE_VERSION for the core and contrib/NAME/CORE_VERSION
# for each contrib module, which Go's module proxy needs to find each module's version. It does
# not push them.
tag: modules
	@test -z "$$(git status --porcelain)" || { echo "the working tree has changes: commit them first"; exit 1; }
	git tag $(CORE_VERSION)
	@for mod in $(RELEASED); do echo "git tag $$mod/$(CORE_VERSION)"; git tag $$mod/$(CORE_VERSION) || exit 1; done

# test runs every test of the core module and its packages with the race detector, then the
# core's heavy tests without it (heavy_test.go): bounds and memory, on one goroutine, with so
# many rules, names or overrides that the race detector makes them slow and finds nothing.
test:
	go test -race -count=1 ./...
	go test -count=1 -run 'Bound$$|^TestMemory' .

# test-bench checks that the peer benchmark module still builds and its setups still work (one
# iteration of each benchmark). Its first run downloads the five peer libraries.
test-bench:
	cd benchmarks && go vet ./... && go test -count=1 ./... && \
		go test -run '^$$' -bench . -benchtime 1x .

# test-contrib runs the tests of every contrib module, each in its own module, then their
# allocation tests without -race, which allocates and makes them skip.
test-contrib:
	@for mod in $(CONTRIB); do \
		echo "== $$mod"; \
		(cd $$mod && go vet ./... && go test -race -count=1 ./... && \
			go test -count=1 -run 'Allocations$$' ./...) || exit 1; \
	done

# test-all is what CI runs: the linters, the core's tests, the benchmark module's smoke run,
# then every contrib module's tests.
test-all: lint test test-bench test-contrib

# try-from-clone runs the README's "Try it from a clone" commands, both ways, in a throwaway
# module outside the repository, then builds and runs a program that uses the core and
# contrib/prometheus from this checkout: what a user can do before the first release is tagged.
try-from-clone:
	./.ci/try-from-clone

# e2e-deps installs Debian's Chromium for the status page's end-to-end test, unless a chromium
# is on the PATH already (apt-get needs root, as CI has). make test skips that test without it.
e2e-deps:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then \
		echo "chromium is installed: $$(command -v chromium || command -v chromium-browser)"; \
	else \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; \
	fi

# e2e runs the status page's end-to-end test in headless Chromium.
e2e: e2e-deps
	go test -race -count=1 -run '^TestE2E' -v ./breakerdebug/

# screenshot serves the status page of breakerdebug/internal/dashdemo, a Manager after a minute
# of made-up traffic, and saves a headless Chromium screenshot of it to docs/dashboard.png.
screenshot: e2e-deps
	sh breakerdebug/internal/dashdemo/screenshot.sh docs/dashboard.png

# stress drives STRESS_EPISODES half-open episodes from many goroutines under -race (make test
# runs 10,000), then runs each concurrent property test for PROPERTY_TIME (make test: 1s each).
stress:
	STRESS_EPISODES=$(STRESS_EPISODES) go test -race -count=1 -run '^TestStress$$' -v -timeout 30m .
	PROPERTY_TIME=$(PROPERTY_TIME) go test -race -count=1 -run '^TestProperty' -v -timeout 60m .

# soak runs steady traffic on 1,000 resources for SOAK and checks the heap and goroutines.
soak:
	SOAK=$(SOAK) go test -count=1 -run '^TestSoak$$' -v -timeout 0 .

# bench runs the core's benchmarks COUNT times at each GOMAXPROCS of CPU (1 and 2: the Parallel
# benchmarks show what a second core adds) and summarises them with benchstat.
bench:
	go test -run '^$$' -bench '$(BENCH)' -benchmem -cpu $(CPU) -count $(COUNT) . | tee bench.txt
	go run $(BENCHSTAT) bench.txt

# bench-peers runs breaker and its peers side by side; see benchmarks/README.md.
bench-peers:
	COUNT=$(COUNT) ./benchmarks/compare.sh

# scenarios runs the outage scenarios against breaker and its peers in real time (a few
# minutes), then writes docs/scenarios/*.svg and the results section of SCENARIOS.md.
REPS ?= 5
scenarios:
	cd benchmarks && go run ./cmd/scenarios -reps $(REPS) -out ../docs/scenarios -doc ../SCENARIOS.md

# fuzz runs each fuzz target of the core and of breakerdebug (its write endpoint) for FUZZTIME.
# Each new input is minimised for at most 2s: the default, a minute, left the fuzzer idle for
# most of a short run.
fuzz:
	@for pkg in . ./breakerdebug; do \
		for target in $$(go test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "fuzzing $$pkg $$target for $(FUZZTIME)"; \
			go test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s $$pkg || exit 1; \
		done; \
	done

# lint checks the formatting of every file, then runs go vet and staticcheck (pinned above) in
# every module: the core, the peer benchmarks and each contrib module.
lint: modules
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }
	go vet ./...
	go run $(STATICCHECK) ./...
	cd benchmarks && go vet ./... && go run $(STATICCHECK) ./...
	@for mod in $(CONTRIB); do echo "== lint $$mod"; (cd $$mod && go vet ./... && go run $(STATICCHECK) ./...) || exit 1; done

cover:
	go test -count=1 -coverprofile=cover.out ./...
	go tool cover -func=cover.out | tail -1
	go tool cover -html=cover.out -o cover.html
