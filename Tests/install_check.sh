#!/usr/bin/env bash
# The installed artifact runs on a host without Swift (#50). `make install` of the statically
# linked debug build (STATIC_CONFIG=debug: the same link as release-static, in seconds) into a
# DESTDIR; then, in a mount namespace where the toolchain's runtime library directories are empty,
# the installed binary, found on PATH from a directory with no Presets/, must:
# - name no library of the toolchain (ldd);
# - find the hot preset where make install put it (BIN/../share/ingestd/presets);
# - transcode a sample into a ladder that ffprobe reads whole.
# The man pages must name every subcommand's options. Run by `make test`; exits non-zero on the
# first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
fail() { echo "install check: FAIL: $*" >&2; exit 1; }

make -s install STATIC_CONFIG=debug DESTDIR="$stage" PREFIX=/usr/local >"$stage/install.log" 2>&1 \
  || { tail -20 "$stage/install.log"; fail "make install"; }
bin=$stage/usr/local/bin/ingestd
[ -x "$bin" ] || fail "no $bin"

runtime=$(swift -print-target-info | python3 -c 'import json, sys; print("\n".join(json.load(sys.stdin)["paths"]["runtimeLibraryPaths"]))')
[ -n "$runtime" ] || fail "no runtime library path from swift -print-target-info"
if ldd "$bin" | grep -E 'libswift|libFoundation|not found'; then fail "the installed binary needs the toolchain's libraries"; fi
while read -r dir; do
  if ldd "$bin" | grep -F "$dir/"; then fail "the installed binary loads from $dir"; fi
done <<<"$runtime"

grep -q -- '--margin' "$stage/usr/local/share/man/man1/ingestd.watch.1" || fail "ingestd.watch.1 lacks --margin"
for page in ingestd transcode watch worker serve console reprocess sweep status submit retry; do
  name=ingestd.$page.1; [ "$page" = ingestd ] && name=ingestd.1
  [ -s "$stage/usr/local/share/man/man1/$name" ] || fail "no man page $name"
done

# Without the toolchain: its runtime directories become empty tmpfs mounts in a namespace of
# their own (unprivileged users get one through a user namespace).
namespace=(unshare --mount)
[ "$(id -u)" = 0 ] || namespace=(unshare --mount --map-root-user)
mkdir "$stage/work"
cp "$root/samples/portrait_rotated.mp4" "$stage/work/"
# shellcheck disable=SC2016
"${namespace[@]}" env RUNTIME="$runtime" STAGE="$stage" PATH="$stage/usr/local/bin:$PATH" bash -c '
  set -euo pipefail
  while read -r dir; do mount -t tmpfs none "$dir"; done <<<"$RUNTIME"
  while read -r dir; do [ -z "$(ls -A "$dir")" ] || { echo "$dir not hidden" >&2; exit 1; }; done <<<"$RUNTIME"
  cd "$STAGE/work"
  ingestd --version >/dev/null
  ingestd preset --preset hot --hash >hot.hash
  ingestd transcode portrait_rotated.mp4 --out out --no-progress --json >result.json
' || fail "the installed binary without the toolchain (see above)"

[ "$(cat "$stage/work/hot.hash")" = "$(.build/debug/ingestd preset --preset "$root/Presets/hot.json" --hash)" ] \
  || fail "the installed binary did not find the hot preset under share/ingestd/presets"
duration=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$stage/work/out/1080p/index.m3u8")
python3 -c "import sys; d = float(sys.argv[1]); sys.exit(0 if abs(d - 6) < 0.2 else 1)" "$duration" \
  || fail "the 1080p rung lasts $duration s, not 6"
ffmpeg -v error -xerror -i "$stage/work/out/master.m3u8" -map 0:v:0 -f null - || fail "the ladder does not decode clean"
echo "install check: passed (static binary $(du -m "$bin" | cut -f1) MB; transcoded without $(echo "$runtime" | tr '\n' ' '))"
