#!/usr/bin/env bash
# Checks deploy/nginx/ingestd-cdn.conf rule by rule against real nginx (Debian's): a fake CDN tree
# laid out as the daemon writes it (a growing version t3/, a published --hold video, a reprocess
# version v<hash>/, staging, ledger and .partial files), served by Tests/IngestdTesting/nginx_cdn.py
# on a free loopback port, every rule asserted with curl. Needs nginx, curl, python3.
#     Tests/nginx_cdn_check.sh            prints each check, then "N passed, N failed"
# NGINX_CDN_CONF=FILE checks another rules file (e.g. a mutant, to see a check fail).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/nginx-cdn-check.XXXXXX)
cdn="$work/cdn"
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
passed=0 failed=0
check() {  # check NAME CONDITION-STATUS
    if [ "$2" = 0 ]; then passed=$((passed + 1)); echo "ok    $1"; else failed=$((failed + 1)); echo "FAIL  $1"; fi
}
put() {  # put PATH CONTENT: replaced whole by rename, as ingestd does
    mkdir -p "$(dirname "$cdn/$1")"
    printf '%s' "$2" > "$cdn/$1.new.$$" && mv -f "$cdn/$1.new.$$" "$cdn/$1"
}
head_of() {  # head_of FILE HEADER: the header's value (first one), lower-case name match
    awk -v h="$(echo "$2" | tr A-Z a-z)" 'BEGIN{FS=": "} tolower($1)==h {sub(/\r$/,"",$2); print $2; exit}' "$1"
}
status_of() { awk 'NR==1{print $2}' "$1"; }
fetch() {  # fetch NAME PATH [curl args…]: headers in $work/NAME.h, body in $work/NAME.b
    local name=$1 path=$2; shift 2
    curl -s -o "$work/$name.b" -D "$work/$name.h" "$@" "$base$path"
}

# The tree.
v=vid1; t=$v/t3
put $v/master.m3u8 $'#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=192000\nt3/234p/index.m3u8\n'
put $t/master.m3u8 $'#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=192000\n234p/index.m3u8\n'
put $t/234p/index.m3u8 $'#EXTM3U\n#EXT-X-PLAYLIST-TYPE:EVENT\n#EXT-X-MAP:URI="init.mp4"\n#EXTINF:0.5,\nseg_000.m4s\n'
head -c 700 /dev/urandom > "$cdn/$t/234p/init.mp4"
head -c 4000 /dev/urandom > "$cdn/$t/234p/seg_000.m4s"
put $t/234p/.seg_001.m4s.partial half
head -c 9000 /dev/urandom > "$cdn/$t/video.mp4"          # in place, not yet whole
put $t/poster_240x426.jpg jpeg; put $t/storyboard.jpg jpeg; put $t/storyboard.vtt $'WEBVTT\n'; put $t/preview.webp webp
put $t/captions-en.vtt $'WEBVTT\n'; put $t/subs-en/index.m3u8 $'#EXTM3U\n#EXTINF:0.5,\nseg_000.vtt\n'; put $t/subs-en/seg_000.vtt $'WEBVTT\n'
put .vid1.staging-t4/234p/seg_000.m4s staged
put $v/.retired.json '{"entries":{}}'
put $v/.manifest.json.partial '{}'
# A --hold video (flat, renamed into place whole) and a reprocessed one (v<hash>/).
put vid2/master.m3u8 $'#EXTM3U\n360p/index.m3u8\n'; put vid2/manifest.json '{"version":2}'
put vid2/360p/index.m3u8 $'#EXTM3U\n#EXT-X-ENDLIST\n'; put vid2/360p/seg_000.m4s seg; put vid2/video.mp4 mp4
put vid2/poster_240x426.jpg jpeg; put vid2/preview.webp webp; put vid2/storyboard.vtt $'WEBVTT\n'
put vid4/vabc123/video.mp4 mp4; put vid4/vabc123/poster_240x426.jpg jpeg; put vid4/notes.txt v1
# A signed video (its directory holds .playback-signed), growing in t1/; keys: this one, the
# previous (a rotation), and one retired (no longer configured).
s=vid5
put $s/master.m3u8 $'#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=192000\nt1/234p/index.m3u8\n'
put $s/t1/234p/index.m3u8 $'#EXTM3U\n#EXT-X-MAP:URI="init.mp4"\n#EXTINF:0.5,\nseg_000.m4s\n'
head -c 4000 /dev/urandom > "$cdn/$s/t1/234p/seg_000.m4s"; put $s/t1/manifest.json '{}'; put $s/t1/poster_240x426.jpg jpeg
put $s/.playback-signed ''
newkey() { echo "plsec_$(head -c 32 /dev/urandom | base64 -w0)" > "$work/$1.key"; cat "$work/$1.key"; }
key=$(newkey current); previous=$(newkey previous); newkey retired > /dev/null

python3 "$here/Tests/IngestdTesting/nginx_cdn.py" "$cdn" --conf "${NGINX_CDN_CONF:-$here/deploy/nginx/ingestd-cdn.conf}" --port-file "$work/port" --access-log "$work/access.log" \
    --playback-secret "$key" --playback-secret-previous "$previous" \
    > "$work/server.out" 2> "$work/server.err" &
server_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { echo "nginx did not start:"; cat "$work/server.err"; exit 1; }
base="http://127.0.0.1:$(cat "$work/port")"
echo "nginx on $base, CDN $cdn"

# MIME types.
for pair in "$v/master.m3u8 application/vnd.apple.mpegurl" "$t/234p/index.m3u8 application/vnd.apple.mpegurl" \
            "$t/234p/seg_000.m4s video/iso.segment" "$t/234p/init.mp4 video/mp4" "vid2/video.mp4 video/mp4" \
            "vid2/preview.webp image/webp" "vid2/storyboard.vtt text/vtt" "vid2/manifest.json application/json" \
            "vid2/poster_240x426.jpg image/jpeg"; do
    set -- $pair
    fetch mime "/$1"
    check "type of $1 is $2" "$([ "$(status_of "$work/mime.h")" = 200 ] && [ "$(head_of "$work/mime.h" Content-Type)" = "$2" ]; echo $?)"
done

# Cache-Control.
immutable="public, max-age=31536000, immutable"
for path in $v/master.m3u8 $t/master.m3u8 $t/234p/index.m3u8 vid2/manifest.json vid2/360p/index.m3u8; do
    fetch cc "/$path"
    check "$path: no-cache, ETag, no Last-Modified" "$([ "$(head_of "$work/cc.h" Cache-Control)" = no-cache ] \
        && [ -n "$(head_of "$work/cc.h" ETag)" ] && [ -z "$(head_of "$work/cc.h" Last-Modified)" ]; echo $?)"
done
for path in $t/234p/seg_000.m4s $t/234p/init.mp4 vid2/360p/seg_000.m4s vid2/video.mp4 vid2/poster_240x426.jpg \
            vid2/preview.webp vid2/storyboard.vtt vid4/vabc123/video.mp4 vid4/vabc123/poster_240x426.jpg; do
    fetch cc "/$path"
    check "$path: immutable" "$([ "$(status_of "$work/cc.h")" = 200 ] && [ "$(head_of "$work/cc.h" Cache-Control)" = "$immutable" ]; echo $?)"
done

# Hidden names: 404 however the path is spelled.
for path in /$v/.retired.json /$v/.manifest.json.partial /.vid1.staging-t4/234p/seg_000.m4s /$t/234p/.seg_001.m4s.partial \
            /$v/%2eretired.json /$v/./.retired.json /$v/t3/../.retired.json /.vid1.staging-t4/ /$v/.retired.json?x=1; do
    fetch hidden "$path" --path-as-is
    check "hidden $path: 404, body not served" "$([ "$(status_of "$work/hidden.h")" = 404 ] && ! grep -q 'entries\|staged\|half' "$work/hidden.b"; echo $?)"
done

# A growing version's unstreamed files: 404 until its manifest.json, then immutable.
for path in $t/video.mp4 $t/poster_240x426.jpg $t/storyboard.jpg $t/storyboard.vtt $t/preview.webp $t/captions-en.vtt; do
    fetch gate "/$path"
    check "$path before the version's manifest: 404, not cacheable" "$([ "$(status_of "$work/gate.h")" = 404 ] \
        && [ -z "$(head_of "$work/gate.h" Cache-Control)" ]; echo $?)"
done
# A subtitle segment is whole before its playlist names it: served at once, kept, as text/vtt.
fetch subs "/$t/subs-en/seg_000.vtt"
check "a growing version's subtitle segment: 200 at once, immutable, text/vtt" "$([ "$(status_of "$work/subs.h")" = 200 ] \
    && [ "$(head_of "$work/subs.h" Cache-Control)" = "$immutable" ] && head_of "$work/subs.h" Content-Type | grep -q '^text/vtt'; echo $?)"
put $t/manifest.json '{"version":2}'
for path in $t/video.mp4 $t/poster_240x426.jpg $t/storyboard.jpg $t/storyboard.vtt $t/preview.webp $t/captions-en.vtt; do
    fetch gate "/$path"
    check "$path after it: 200, immutable" "$([ "$(status_of "$work/gate.h")" = 200 ] && [ "$(head_of "$work/gate.h" Cache-Control)" = "$immutable" ]; echo $?)"
done

# Revalidation: a matching ETag is a 304; a playlist that grew within the same second is a 200.
fetch r1 /$t/234p/index.m3u8
etag=$(head_of "$work/r1.h" ETag) date=$(head_of "$work/r1.h" Date)
fetch r2 /$t/234p/index.m3u8 -H "If-None-Match: $etag"
check "playlist: If-None-Match of the same version: 304 with no-cache and CORS" "$([ "$(status_of "$work/r2.h")" = 304 ] \
    && [ "$(head_of "$work/r2.h" Cache-Control)" = no-cache ] && [ "$(head_of "$work/r2.h" Access-Control-Allow-Origin)" = '*' ]; echo $?)"
same=1
for _ in 1 2 3 4 5; do  # a version and the next within one second of mtime
    python3 -c 'import time; f = time.time() % 1; time.sleep(0 if f < 0.3 else 1.02 - f)'
    put $t/234p/index.m3u8 $'#EXTM3U\n#EXT-X-PLAYLIST-TYPE:EVENT\n#EXT-X-MAP:URI="init.mp4"\n#EXTINF:0.5,\nseg_000.m4s\n'
    fetch g1 /$t/234p/index.m3u8
    etag=$(head_of "$work/g1.h" ETag)
    put $t/234p/index.m3u8 $'#EXTM3U\n#EXT-X-PLAYLIST-TYPE:EVENT\n#EXT-X-MAP:URI="init.mp4"\n#EXTINF:0.5,\nseg_000.m4s\n#EXTINF:0.5,\nseg_001.m4s\n'
    fetch g2 /$t/234p/index.m3u8 -H "If-None-Match: $etag" -H "If-Modified-Since: $(head_of "$work/g1.h" Date)"
    [ "$(head_of "$work/g1.h" Date)" = "$(head_of "$work/g2.h" Date)" ] && { same=0; break; }
done
check "a playlist that grew within the same second (revalidated with its ETag and If-Modified-Since): 200, new body" \
    "$([ $same = 0 ] && [ "$(status_of "$work/g2.h")" = 200 ] && grep -q seg_001 "$work/g2.b"; echo $?)"
# If-Modified-Since alone, equal to the file's own mtime (what a client that had a Last-Modified
# from elsewhere would send; nginx's default `exact` would answer 304 whatever changed within that second).
fetch ims /$t/234p/index.m3u8 -H "If-Modified-Since: $(TZ=GMT LC_ALL=C date -r "$cdn/$t/234p/index.m3u8" '+%a, %d %b %Y %H:%M:%S GMT')"
check "playlist: If-Modified-Since alone, even equal to its mtime, is ignored (200)" "$([ "$(status_of "$work/ims.h")" = 200 ]; echo $?)"
# The hazard, shown on a file these rules do not cover (nginx's defaults): the same-second update is a 304.
put vid4/notes.txt v1
fetch n1 /vid4/notes.txt
put vid4/notes.txt v2-longer
fetch n2 /vid4/notes.txt -H "If-Modified-Since: $(head_of "$work/n1.h" Last-Modified)"
echo "info  without these rules, a file replaced within the same second and revalidated by If-Modified-Since: $(status_of "$work/n2.h")"
fetch s1 /$t/234p/seg_000.m4s
fetch s2 /$t/234p/seg_000.m4s -H "If-None-Match: $(head_of "$work/s1.h" ETag)"
check "segment: If-None-Match: 304, immutable, CORS" "$([ "$(status_of "$work/s2.h")" = 304 ] \
    && [ "$(head_of "$work/s2.h" Cache-Control)" = "$immutable" ] && [ "$(head_of "$work/s2.h" Access-Control-Allow-Origin)" = '*' ]; echo $?)"

# The pointer replaced (growing -> published, reprocess): the next request has the new master.
fetch p1 /$v/master.m3u8
put $v/master.m3u8 $'#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=154321,AVERAGE-BANDWIDTH=120000\nt3/234p/index.m3u8\n#EXT-X-I-FRAME-STREAM-INF:URI="t3/234p/iframes.m3u8"\n'
fetch p2 /$v/master.m3u8 -H "If-None-Match: $(head_of "$work/p1.h" ETag)"
check "master pointer replaced: 200 with the new master (open_file_cache on in the http block)" \
    "$([ "$(status_of "$work/p2.h")" = 200 ] && grep -q I-FRAME "$work/p2.b"; echo $?)"

# CORS.
fetch c1 /$t/234p/seg_000.m4s -H "Origin: https://app.example" -H "Range: bytes=0-99"
check "segment range request: 206, CORS, Content-Range exposed" "$([ "$(status_of "$work/c1.h")" = 206 ] \
    && [ "$(head_of "$work/c1.h" Access-Control-Allow-Origin)" = '*' ] \
    && head_of "$work/c1.h" Access-Control-Expose-Headers | grep -q Content-Range \
    && [ "$(head_of "$work/c1.h" Cache-Control)" = "$immutable" ]; echo $?)"
for path in $v/master.m3u8 $t/234p/seg_000.m4s $t/video.mp4; do
    fetch pre "/$path" -X OPTIONS -H "Origin: https://app.example" -H "Access-Control-Request-Method: GET" \
        -H "Access-Control-Request-Headers: range"
    check "preflight $path: 204, Allow-Origin *, GET allowed, Range allowed, no Cache-Control" "$([ "$(status_of "$work/pre.h")" = 204 ] \
        && [ "$(head_of "$work/pre.h" Access-Control-Allow-Origin)" = '*' ] \
        && head_of "$work/pre.h" Access-Control-Allow-Methods | grep -q GET \
        && head_of "$work/pre.h" Access-Control-Allow-Headers | grep -qi range \
        && [ -z "$(head_of "$work/pre.h" Cache-Control)" ]; echo $?)"
done
rm "$cdn/$v/master.m3u8"
fetch gone /$v/master.m3u8 -H "Origin: https://app.example"
check "a withdrawn master: 404 a player can read (CORS), no-cache" "$([ "$(status_of "$work/gone.h")" = 404 ] \
    && [ "$(head_of "$work/gone.h" Access-Control-Allow-Origin)" = '*' ] && [ "$(head_of "$work/gone.h" Cache-Control)" = no-cache ]; echo $?)"
fetch gone /$v/t9/234p/seg_000.m4s
check "a missing segment: 404 without Cache-Control" "$([ "$(status_of "$work/gone.h")" = 404 ] && [ -z "$(head_of "$work/gone.h" Cache-Control)" ]; echo $?)"

# Signed playback: only a valid token opens a signed video; a public one needs none.
sign() {  # sign KEY_NAME VIDEO PATH [EXPIRES]: the path of a signed URL (the docs' Python recipe)
    if [ -n "${4:-}" ]; then python3 "$here/Tests/IngestdTesting/playback_url.py" --expires "$4" "" "$2" "$work/$1.key" "$3"
    else python3 "$here/Tests/IngestdTesting/playback_url.py" "" "$2" "$work/$1.key" 3600 "$3"; fi
}
code() { curl -s -o /dev/null -w '%{http_code}' --path-as-is "$base$1"; }
for path in master.m3u8 t1/234p/index.m3u8 t1/234p/seg_000.m4s t1/poster_240x426.jpg t1/manifest.json; do
    check "signed video, no token: $path 403" "$([ "$(code "/$s/$path")" = 403 ]; echo $?)"
    check "signed video, this key's token: $path 200" "$([ "$(code "$(sign current $s $path)")" = 200 ]; echo $?)"
done
fetch sseg "$(sign current $s t1/234p/seg_000.m4s)"
check "a signed segment: the file's bytes, cached 10 minutes, not a year" "$(cmp -s "$work/sseg.b" "$cdn/$s/t1/234p/seg_000.m4s" \
    && [ "$(head_of "$work/sseg.h" Cache-Control)" = "public, max-age=600" ]; echo $?)"
check "the previous key's token: 200 while it is configured" "$([ "$(code "$(sign previous $s master.m3u8)")" = 200 ]; echo $?)"
check "a retired key's token: 403" "$([ "$(code "$(sign retired $s master.m3u8)")" = 403 ]; echo $?)"
good=$(sign current $s master.m3u8)
token=$(echo "$good" | cut -d/ -f3); sig=${token: -22}; head=${token:0:$(( ${#token} - 23 ))}  # p-KEY-EXPIRES, SIGNATURE
expired=$(sign current $s master.m3u8 $(( $(date +%s) - 60 )))
check "an expired token ($expired): 403" "$(case "$expired" in /$s/p-*) [ "$(code "$expired")" = 403 ];; *) false;; esac; echo $?)"
tampered=$(echo "$sig" | tr 'A-Za-z' 'B-ZAb-za')
for bad in "$head-$tampered" "$head-${sig%?}" "$head-${sig}x" "p-ab+d-${head#p-????-}-$sig" "p-${token:2:4}--5-$sig" \
           "p-${token:2:4}-99999999999-$sig" "p-${token:2:4}-$(( $(date +%s) + 86400 ))-$sig" "p-${token:2:4}-${head#p-????-}-$sig-"; do
    check "a bad token ($bad): refused" "$(case "$(code "/$s/$bad/master.m3u8")" in 403|404) true;; *) false;; esac; echo $?)"
done
check "another video's token (vid1's on $s): 403" "$([ "$(code "/$s/$(sign current vid1 master.m3u8 | cut -d/ -f3)/master.m3u8")" = 403 ]; echo $?)"
check "$s's token on a path naming another directory (..): never a file outside the video" \
    "$(c=$(code "/$s/$token/../../etc/hostname"); [ "$c" = 404 ] || [ "$c" = 403 ]; echo $?)"
check "%2e%2e in a signed path: refused" "$(c=$(code "/$s/$token/%2e%2e/%2e%2e/etc/hostname"); [ "$c" = 404 ] || [ "$c" = 403 ]; echo $?)"
check "// in a signed path: the same file (slashes merged)" "$([ "$(code "/$s/$token//master.m3u8")" = 200 ]; echo $?)"
check "a signed path to a hidden name: 404" "$([ "$(code "/$s/$token/.playback-signed")" = 404 ]; echo $?)"
check "a public video with a valid token for it, and without: 200" \
    "$([ "$(code "$(sign current vid2 master.m3u8)")" = 200 ] && [ "$(code /vid2/master.m3u8)" = 200 ]; echo $?)"
# The rotation done: nginx reloaded without the previous key's line.
python3 "$here/Tests/IngestdTesting/nginx_cdn.py" "$cdn" --conf "${NGINX_CDN_CONF:-$here/deploy/nginx/ingestd-cdn.conf}" --port-file "$work/port2" \
    --playback-secret "$key" > /dev/null 2> "$work/server2.err" &
rotated_pid=$!
for _ in $(seq 100); do [ -s "$work/port2" ] && break; sleep 0.1; done
rotated="http://127.0.0.1:$(cat "$work/port2")"
check "after the rotation: the previous key's token 403, this key's 200" \
    "$([ "$(curl -s -o /dev/null -w '%{http_code}' "$rotated$(sign previous $s master.m3u8)")" = 403 ] \
       && [ "$(curl -s -o /dev/null -w '%{http_code}' "$rotated$(sign current $s master.m3u8)")" = 200 ]; echo $?)"
kill "$rotated_pid" 2>/dev/null; wait "$rotated_pid" 2>/dev/null
rm "$cdn/$s/.playback-signed"
check "made public (marker removed): the next unsigned request 200" "$([ "$(code "/$s/t1/234p/seg_000.m4s")" = 200 ]; echo $?)"
put $s/.playback-signed ''
check "signed again: the next unsigned request 403" "$([ "$(code "/$s/t1/234p/seg_000.m4s")" = 403 ]; echo $?)"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
