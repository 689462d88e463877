# Two commands: `make run` and `make test`. Everything else is a step of those.
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)

.PHONY: run test deps build bench clean stop demo fuzz install deb

run: deps build
	@scripts/run.sh

test: deps
	@scripts/test.sh

# Reporters and reports in make run's database, through the HTTP API; needs make run serving.
demo: build
	@scripts/demo.sh

deps:
	@scripts/install-deps.sh

# The release binary, Swift runtime linked in (scripts/build.sh).
# pipefail: a failed build fails here, so no later step (bench, run) uses an earlier build's binary.
build:
	@set -o pipefail; scripts/build.sh 2>&1 | { grep -Ev '^(\[[0-9]+/[0-9]+\]|Building for|Compiling|Write|Emitting|Linking)' || true; }
	@test -x .build/release/pricesvc

# The binary, its migrations, a hardened systemd unit and its user, into $(DESTDIR)$(PREFIX) (docs/packaging.md).
PREFIX ?= /usr/local
install: build
	@PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) scripts/install.sh

# A Debian package in var/deb/ (dpkg-deb; docs/packaging.md).
deb: build
	@scripts/package-deb.sh var/deb

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
