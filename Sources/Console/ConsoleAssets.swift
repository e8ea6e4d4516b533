/// The console's stylesheet and its one script (served from `/console/assets/`, as the CSP
/// allows nothing inline). The script follows the shared snapshot over Server-Sent Events:
/// counts everywhere; a tab's list or the overview replaced in place (boxes ticked stay
/// ticked); on a filtered page, a note that the queue changed.
enum ConsoleAssets {
    static let script = #"""
        "use strict";
        (() => {
          const body = document.body, view = body.dataset.live;
          if (!view || !window.EventSource) return;
          const loaded = Number(body.dataset.version || 0);
          const events = new EventSource("/console/events?view=" + encodeURIComponent(view));
          events.addEventListener("snapshot", (message) => {
            const s = JSON.parse(message.data);
            for (const [key, count] of Object.entries(s.counts)) {
              document.querySelectorAll('[data-count="' + key + '"]').forEach((el) => { el.textContent = count; });
            }
            document.getElementById("taken").textContent = s.taken;
            const live = document.getElementById("live");
            if (typeof s.html === "string" && live) {
              const ticked = new Set([...live.querySelectorAll("input[name='id[]']:checked")].map((box) => box.value));
              live.innerHTML = s.html;
              live.querySelectorAll("input[name='id[]']").forEach((box) => { box.checked = ticked.has(box.value); });
            } else if (s.version > loaded) {
              document.getElementById("stale").hidden = false;
            }
            body.dataset.shown = String(s.version);
          });
        })();
        """#

    static let stylesheet = """
        :root { font: 14px/1.4 system-ui, sans-serif; color: #1d2330; background: #f6f7f9; }
        body { margin: 0; }
        header { display: flex; gap: 1.5em; align-items: center; padding: .6em 1.2em; background: #1d2330; color: #fff; }
        header a { color: #cfd6e4; text-decoration: none; }
        .brand { font-weight: 700; color: #fff; }
        .tabs { display: flex; gap: .4em; flex: 1; }
        .tabs a { padding: .3em .7em; border-radius: 4px; }
        .tabs a.current { background: #3a4560; color: #fff; }
        .count { font-variant-numeric: tabular-nums; opacity: .8; }
        .who { display: flex; gap: .5em; align-items: center; margin: 0; }
        main { padding: 1em 1.2em; }
        table { border-collapse: collapse; width: 100%; background: #fff; margin-bottom: 1.2em; }
        th, td { text-align: left; padding: .35em .6em; border-bottom: 1px solid #e3e6ec; vertical-align: top; }
        th { font-weight: 600; color: #5a6478; font-size: .9em; }
        td.input { max-width: 28em; overflow-wrap: anywhere; }
        .empty { color: #7a8497; text-align: center; }
        .filter { display: flex; flex-wrap: wrap; gap: .8em; align-items: end; margin-bottom: 1em; }
        .filter label { display: flex; flex-direction: column; font-size: .85em; color: #5a6478; }
        .banner { margin: 0; padding: .7em 1.2em; background: #b3261e; color: #fff; }
        .notice { margin: 0; padding: .7em 1.2em; background: #dff3e4; }
        .stale { margin: 0; padding: .5em 1.2em; background: #fff4ce; }
        .state-failed .state, .state.state-failed { color: #b3261e; }
        .state-rejected .state, .state.state-rejected { color: #a15c00; }
        .state-published .state, .state.state-published { color: #1f7a3a; }
        .facts { display: grid; grid-template-columns: max-content 1fr; gap: .3em 1em; }
        .facts dt { color: #5a6478; }
        .media { display: flex; gap: 1em; align-items: start; margin-bottom: 1.2em; }
        .history code { font-size: .85em; overflow-wrap: anywhere; }
        pre.log { max-height: 20em; overflow: auto; background: #1d2330; color: #e3e6ec; padding: .6em; font-size: .8em; white-space: pre-wrap; }
        tr.gone { color: #7a8497; }
        footer { padding: .5em 1.2em; color: #7a8497; font-size: .85em; }
        body.login main { max-width: 24em; margin: 4em auto; }
        body.login form { display: flex; flex-direction: column; gap: .8em; }
        .hint { color: #5a6478; font-size: .9em; }
        """
}
