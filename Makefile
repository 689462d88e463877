# Two commands: `make run` and `make test`. Everything else is a step of those.
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)

.PHONY: run test test-all deps build bench clean stop demo fuzz install deb

run: deps build
	@scripts/dev/run.sh

# Every deterministic check, in at most 10 minutes (scripts/dev/test.sh prints each suite's time).
test: deps
	@scripts/dev/test.sh

# Nightly: make test plus what it leaves out because it searches at random or takes long (timed fuzzing,
# schemathesis with a new seed, the tests marked nightly).
test-all: deps
	@scripts/dev/test.sh --all

# Reporters and reports in make run's database, through the HTTP API; needs make run serving.
demo: build
	@scripts/dev/demo.sh

deps:
	@scripts/dev/install-deps.sh

# The release binary, Swift runtime linked in (scripts/dev/build.sh).
# pipefail: a failed build fails here, so no later step (bench, run) uses an earlier build's binary.
build:
	@set -o pipefail; scripts/dev/build.sh 2>&1 | { grep -Ev '^(\[[0-9]+/[0-9]+\]|Building for|Compiling|Write|Emitting|Linking)' || true; }
	@test -x .build/release/pricesvc

# The binary, its migrations, a hardened systemd unit and its user, into $(DESTDIR)$(PREFIX) (docs/packaging.md).
PREFIX ?= /usr/local
install: build
	@PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) packaging/install.sh

# A Debian package in var/deb/ (dpkg-deb; docs/packaging.md).
deb: build
	@packaging/package-deb.sh var/deb

# Timed searches, which make test leaves out because they can find something new on any run: the fuzz
# harness's unit tests and the replay of every committed input (make test runs those too), then every libFuzzer
# target of Fuzz/ for 5 minutes under AddressSanitizer (FUZZ_SECONDS and FUZZ_TARGETS choose others), then
# schemathesis against the OpenAPI document with a new random seed (make test uses a fixed one).
fuzz: deps build
	@swift build --build-tests && swift test --skip-build --filter 'FuzzHarnessTests|FuzzReplayTests'
	@scripts/dev/fuzz.sh $(or $(FUZZ_SECONDS),300) $(FUZZ_TARGETS)
	@scripts/dev/venv.sh && .venv/bin/pytest -q -m nightly integration/e2e/test_fuzz_openapi.py

bench: deps build
	@scripts/dev/install-deps.sh --bench
	@bench/run.sh

stop:
	@scripts/dev/pg-cluster.sh stop var/dev/pg

clean: stop
	rm -rf .build Fuzz/.build var
