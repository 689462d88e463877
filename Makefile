# Two commands: `make run` and `make test`. Everything else is a step of those.
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)

.PHONY: run test deps build bench clean stop demo fuzz

run: deps build
	@scripts/run.sh

test: deps
	@scripts/test.sh

# Reporters and reports in make run's database, through the HTTP API; needs make run serving.
demo: build
	@scripts/demo.sh

deps:
	@scripts/install-deps.sh

build:
	@swift build -c release --product pricesvc 2>&1 | grep -Ev '^(\[[0-9]+/[0-9]+\]|Building for|Compiling|Write|Emitting|Linking)' || true
	@test -x .build/release/pricesvc

# Every libFuzzer target of Fuzz/ for 5 minutes each, after the fuzz harness's own unit tests
# (make test runs them for 20 s each); FUZZ_SECONDS and FUZZ_TARGETS choose others.
fuzz: deps
	@swift test --package-path Fuzz
	@scripts/fuzz.sh $(or $(FUZZ_SECONDS),300) $(FUZZ_TARGETS)

bench: deps build
	@scripts/install-deps.sh --bench
	@bench/run.sh

stop:
	@scripts/pg-cluster.sh stop var/dev/pg

clean: stop
	rm -rf .build Fuzz/.build var
