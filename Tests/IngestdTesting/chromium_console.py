#!/usr/bin/env python3
"""Drives `ingestd console` in headless Chromium, as an operator would, for ConsoleTests.

  chromium_console.py BASE OPERATE_TOKEN READ_TOKEN JOB CROSS_JOB TIMEOUT SHOTS_DIR

BASE is the console's http://host:port. JOB is a failed job that a running worker can publish
once retried; CROSS_JOB another failed job that must stay failed. Chromium is driven over the
DevTools protocol on a pipe (Benchmarks/lib/hls_play.py's CDP class). In order:

  1. /console/jobs without a cookie: the login form (HTTP 401); log in with OPERATE_TOKEN.
  2. The list: every row's id and state, as the page shows them; a screenshot.
  3. Tick JOB, press "Retry selected" (the form posts, the browser follows the 303), then mark
     the page and wait, without navigating, until the row says `published` (the live stream).
  3b. JOB's page: when it has a player (the console runs with --cdn-url), plays it until 1 s
     (`player`: currentTime, videoHeight, error).
  4. A cross-site page (a data: URL) posts a retry of CROSS_JOB: its answer's status.
  5. A second browser context logs in with READ_TOKEN: the boxes and buttons it is shown, and
     the status of a same-origin POST its page makes anyway.
`--play` plays one job's page; `--delete` deletes one from its page (see delete_only);
`--overview` reads the overview's charts (see overview_only).

Prints one JSON object; the test checks it. Screenshots are PNG files; `distinct` counts the
distinct byte values of the decoded pixels (a blank page has a handful).
"""
import base64
import json
import os
import sys
import time
import urllib.parse
import zlib

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Benchmarks", "lib"))
import hls_play  # noqa: E402


def open_tab(cdp):
    session, _, _ = hls_play.open_page(cdp)
    for domain in ("Network", "Page", "Runtime", "Log"):
        cdp.send(f"{domain}.enable", {}, session)
    return session


def js(cdp, session, expr, await_promise=False):
    r = cdp.send("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": await_promise}, session)
    return r.get("result", {}).get("value")


def wait_for(cdp, session, expr, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            value = js(cdp, session, expr)
        except RuntimeError:
            value = None  # between documents
        if value:
            return value
        time.sleep(0.2)
    return None


def loaded(cdp, session, action, timeout):
    """Runs `action` (JS or a URL to navigate to) and waits for the next document to load."""
    js(cdp, session, "window.__old = true")
    if action.startswith(("http:", "data:")):
        cdp.send("Page.navigate", {"url": action}, session)
    else:
        js(cdp, session, action)
    return wait_for(cdp, session, "!window.__old && document.readyState === 'complete' && location.href", timeout)


def screenshot(cdp, session, path):
    data = base64.b64decode(cdp.send("Page.captureScreenshot", {"format": "png"}, session)["data"])
    with open(path, "wb") as f:
        f.write(data)
    idat, at = b"", 8
    while at < len(data):
        length = int.from_bytes(data[at:at + 4], "big")
        kind = data[at + 4:at + 8]
        if kind == b"IDAT":
            idat += data[at + 8:at + 8 + length]
        at += 12 + length
    pixels = zlib.decompress(idat)
    return {"path": path, "bytes": len(data), "distinct": len(set(pixels[::7]))}


def login(cdp, session, base, token, timeout):
    first = loaded(cdp, session, base + "/console/jobs", timeout)
    form = js(cdp, session, "!!document.querySelector('input[name=token]')")
    js(cdp, session, f"document.querySelector('input[name=token]').value = {json.dumps(token)}")
    after = loaded(cdp, session, "document.querySelector('form').submit()", timeout)
    return {"first": first, "form": form, "after": after}


ROWS = "JSON.stringify([...document.querySelectorAll('#live tr[data-id]')].map(tr => [tr.dataset.id, tr.querySelector('.state').textContent.trim()]))"


PLAYER = ("(v => JSON.stringify({currentTime: v.currentTime, videoHeight: v.videoHeight, src: v.currentSrc, "
          "error: v.error && v.error.message}))(document.getElementById('player'))")


def play(cdp, session, timeout):
    """Plays the job page's player until 1 s or an error; what it reached."""
    if not js(cdp, session, "!!document.getElementById('player')"):
        return None
    js(cdp, session, "document.getElementById('player').play()")
    wait_for(cdp, session, "(v => v.currentTime >= 1 || v.error)(document.getElementById('player'))", timeout)
    return json.loads(js(cdp, session, PLAYER))


def signed_in(base, token, path, timeout, read):
    """Logs in with `token`, opens `path`, lets `read(cdp, session, out)` fill `out`, adds the
    page's script errors and prints it."""
    cdp = hls_play.CDP(hls_play.find_chromium())
    try:
        s = open_tab(cdp)
        out = {"login": login(cdp, s, base, token, timeout), "page": loaded(cdp, s, base + path, timeout)}
        read(cdp, s, out)
        out["page_errors"] = [e["params"]["exceptionDetails"].get("text") for e in cdp.drain()
                              if e.get("method") == "Runtime.exceptionThrown"]
    finally:
        cdp.close()
    print(json.dumps(out))


def play_only(base, token, job, timeout):
    """`--play BASE TOKEN JOB TIMEOUT`: logs in, opens JOB's page and plays its player."""
    signed_in(base, token, f"/console/jobs/{job}", timeout, lambda cdp, s, out: out.update(player=play(cdp, s, timeout)))


CHARTS = """JSON.stringify(Object.fromEntries([...document.querySelectorAll('svg.chart[data-series]')].map(svg => [svg.dataset.series, {
  sum: [...svg.querySelectorAll('rect[data-value]')].reduce((n, r) => n + Number(r.dataset.value), 0),
  bars: svg.querySelectorAll('rect[data-value]').length,
  lines: [...svg.querySelectorAll('polyline')].map(p => p.dataset.series),
  titles: [...svg.querySelectorAll('title')].map(t => t.textContent).filter(t => !/: 0 /.test(t)),
  label: svg.getAttribute('aria-label'),
  width: svg.getBoundingClientRect().width}])))"""


def overview_only(base, token, timeout, shot):
    """`--overview BASE TOKEN TIMEOUT SHOT`: logs in, opens the overview, waits for its charts
    (and for the live stream to have replaced them once), and reads them: per series the sum of
    its bars, their count, its lines, its hover titles; the summary line; a screenshot."""
    def read(cdp, s, out):
        wait_for(cdp, s, "!!document.querySelector('svg.chart') && !!document.body.dataset.shown", timeout)
        out["charts"] = json.loads(js(cdp, s, CHARTS) or "{}")
        out["summary"] = js(cdp, s, "(document.querySelector('.activity .summary') || {}).textContent")
        out["hosts"] = js(cdp, s, "[...document.querySelectorAll('table.hosts tbody tr')].map(tr => tr.innerText)")
        out["shot"] = screenshot(cdp, s, shot)
    signed_in(base, token, "/console/", timeout, read)


def cross_site_post(cdp, session, base, route, fields, timeout):
    """A page on another site (a data: URL) posts `fields` to `route`: the status it gets."""
    inputs = "".join(f"<input name={name} value='{value}'>" for name, value in fields.items())
    page = f"<form method=post action='{base}{route}'>{inputs}</form><script>document.forms[0].submit()</script>"
    cdp.drain()
    loaded(cdp, session, "data:text/html," + urllib.parse.quote(page), timeout)
    statuses, end = [], time.monotonic() + timeout
    while not statuses and time.monotonic() < end:
        statuses += [e["params"]["response"]["status"] for e in cdp.drain()
                     if e.get("method") == "Network.responseReceived" and e["params"]["response"]["url"].endswith(route)]
        if not statuses:
            time.sleep(0.2)
    return statuses[-1] if statuses else None


def delete_only(base, operate, read, job, timeout):
    """`--delete BASE OPERATE READ JOB TIMEOUT`: a read token is shown no delete form and its
    POST is refused; a cross-site page's POST is refused; an operator deletes JOB from its page
    with a code and a reason and sees its tombstone, while a second tab on the deleted view sees
    the row arrive without a reload."""
    out = {}
    cdp = hls_play.CDP(hls_play.find_chromium())
    try:
        r = open_tab(cdp)
        out["read_login"] = login(cdp, r, base, read, timeout)
        loaded(cdp, r, f"{base}/console/jobs/{job}", timeout)
        out["read_forms"] = js(cdp, r, "document.querySelectorAll('form.delete').length")
        out["read_post_status"] = js(cdp, r, "fetch('/console/jobs/delete', {method: 'POST', headers: {'Content-Type': "
                                             f"'application/x-www-form-urlencoded'}}, body: 'id={job}&code=owner&reason=no'}}).then(r => r.status)", True)
        s = open_tab(cdp)
        out["login"] = login(cdp, s, base, operate, timeout)
        out["cross_site_status"] = cross_site_post(cdp, s, base, "/console/jobs/delete",
                                                   {"id": job, "code": "owner", "reason": "forged"}, timeout)
        live = open_tab(cdp)
        login(cdp, live, base, operate, timeout)
        loaded(cdp, live, f"{base}/console/jobs?state=deleted", timeout)
        js(cdp, live, "window.__kept = 42")
        loaded(cdp, s, f"{base}/console/jobs/{job}", timeout)
        out["forms"] = js(cdp, s, "document.querySelectorAll('form.delete').length")
        js(cdp, s, "document.querySelector('form.delete select[name=code]').value = 'notice'")
        js(cdp, s, "document.querySelector('form.delete input[name=reason]').value = 'rights holder notice 4411'")
        out["after_delete"] = loaded(cdp, s, "document.querySelector('form.delete button').click()", timeout)
        out["notice"] = js(cdp, s, "(document.querySelector('.notice') || {}).textContent")
        out["detail_text"] = js(cdp, s, "document.querySelector('main').innerText")
        row = f"!!document.querySelector('#live tr[data-id=\"{job}\"]')"
        out["live_row"] = bool(wait_for(cdp, live, row, timeout))
        out["kept"] = js(cdp, live, "window.__kept")
        out["page_errors"] = [e["params"]["exceptionDetails"].get("text") for e in cdp.drain()
                              if e.get("method") == "Runtime.exceptionThrown"]
    finally:
        cdp.close()
    print(json.dumps(out))


def main():
    if sys.argv[1] == "--play":
        return play_only(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]))
    if sys.argv[1] == "--overview":
        return overview_only(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5])
    if sys.argv[1] == "--delete":
        return delete_only(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], float(sys.argv[6]))
    base, operate, read, job, cross, timeout, shots = sys.argv[1:8]
    timeout = float(timeout)
    out = {}
    cdp = hls_play.CDP(hls_play.find_chromium())
    try:
        s = open_tab(cdp)
        out["login"] = login(cdp, s, base, operate, timeout)
        row = f"document.querySelector('tr[data-id=\"{job}\"] .state')"
        out["state_before"] = wait_for(cdp, s, f"{row} && {row}.textContent.trim()", timeout)
        out["rows"] = json.loads(js(cdp, s, ROWS) or "[]")
        out["shot_list"] = screenshot(cdp, s, os.path.join(shots, "console-jobs.png"))
        js(cdp, s, f"document.querySelector('input[name=\"id[]\"][value=\"{job}\"]').checked = true")
        out["after_retry"] = loaded(cdp, s, "document.querySelector('button[value=selected]').click()", timeout)
        out["notice"] = js(cdp, s, "(document.querySelector('.notice') || {}).textContent")
        js(cdp, s, "window.__kept = 42")
        seen, end = [], time.monotonic() + timeout
        while time.monotonic() < end:
            state = js(cdp, s, f"{row} && {row}.textContent.trim()")
            if state and (not seen or seen[-1] != state):
                seen.append(state)
            if state and state.startswith("published"):
                break
            time.sleep(0.2)
        out["states_seen"] = seen
        out["kept"] = js(cdp, s, "window.__kept")
        out["shot_live"] = screenshot(cdp, s, os.path.join(shots, "console-live.png"))
        out["overview"] = loaded(cdp, s, base + "/console/", timeout)
        out["overview_text"] = js(cdp, s, "document.querySelector('main').innerText")
        out["shot_overview"] = screenshot(cdp, s, os.path.join(shots, "console-overview.png"))
        out["detail"] = loaded(cdp, s, f"{base}/console/jobs/{job}", timeout)
        out["detail_text"] = js(cdp, s, "document.querySelector('main').innerText")
        player = play(cdp, s, timeout)
        if player is not None:
            out["player"] = player

        # The page's own POST is answered after it loads: waited for, not given a second.
        out["cross_site_status"] = cross_site_post(cdp, s, base, "/console/jobs/retry", {"id": cross}, timeout)

        r = open_tab(cdp)
        out["read_login"] = login(cdp, r, base, read, timeout)
        loaded(cdp, r, base + "/console/jobs?state=failed", timeout)
        out["read_controls"] = js(cdp, r, "document.querySelectorAll('input[name=\"id[]\"], input[name=id], button[name=action]').length")
        out["read_rows"] = json.loads(js(cdp, r, ROWS) or "[]")
        out["read_post_status"] = js(cdp, r, "fetch('/console/jobs/retry', {method: 'POST', headers: {'Content-Type': "
                                             f"'application/x-www-form-urlencoded'}}, body: 'id={cross}'}}).then(r => r.status)", True)
        errors = []
        for e in cdp.drain():
            if e.get("method") == "Runtime.exceptionThrown":
                errors.append(e["params"]["exceptionDetails"].get("text"))
            elif e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error":
                entry = e["params"]["entry"]
                if "status of 40" not in entry.get("text", ""):  # the refusals this run asks for
                    errors.append(entry.get("text"))
        out["page_errors"] = errors
    finally:
        cdp.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
