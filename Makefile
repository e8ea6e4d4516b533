# ingestd — see README.md. Every target installs what it needs (Debian packages) first.
SWIFT ?= swift
APT_PACKAGES := pkg-config ffmpeg python3 libavformat-dev libavcodec-dev libavutil-dev \
                libswresample-dev libswscale-dev libavfilter-dev
PKG_MODULES := libavformat libavcodec libavutil libswresample libswscale libavfilter
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEMO_OUT ?= out/demo

.PHONY: all deps build release demo test bench clean

all: build

# Installs FFmpeg's development libraries (and the ffmpeg/ffprobe CLIs used as checkers) when missing.
deps:
	@if ! pkg-config --exists $(PKG_MODULES) 2>/dev/null || ! command -v ffprobe >/dev/null || ! command -v python3 >/dev/null; then \
		echo "installing Debian packages: $(APT_PACKAGES)"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(APT_PACKAGES) >/dev/null; \
	fi
	@command -v $(SWIFT) >/dev/null || { echo "error: a Swift 6 toolchain is required (swift.org/install)"; exit 1; }

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# Transcodes every playable sample into $(DEMO_OUT)/<name>/ and says where the output is.
demo: release
	@rm -rf $(DEMO_OUT) && mkdir -p $(DEMO_OUT)
	@for f in samples/portrait_rotated.mp4 samples/landscape_60fps.mp4 samples/hdr_hlg.mp4 samples/noaudio_odd.webm; do \
		n=$$(basename $$f); n=$${n%.*}; \
		echo "== $$f"; \
		.build/release/ingestd transcode $$f --out $(DEMO_OUT)/$$n || exit 1; \
	done
	@echo "== samples/broken_truncated.mp4 (expected to be rejected)"
	@.build/release/ingestd transcode samples/broken_truncated.mp4 --out $(DEMO_OUT)/broken_truncated; \
		echo "   exit status $$? (65 = bad input); nothing was published"
	@echo
	@echo "Output is in $(DEMO_OUT)/ — open $(DEMO_OUT)/portrait_rotated/master.m3u8 in an HLS player."

test: deps
	$(SWIFT) build
	SWIFT_BACKTRACE=enable=no $(SWIFT) test

bench: release
	Benchmarks/ladder.sh

clean:
	rm -rf .build out bench-out
