/// The console's HTML, as Mustache templates (swift-mustache): `{{x}}` is escaped, `{{{x}}}`
/// is HTML this console rendered itself. No inline script or style anywhere (the CSP forbids it).
enum ConsoleTemplates {
    static let all: [String: String] = [
        "page": page, "login": login, "jobs": jobs, "rows": rows, "job": job, "overview": overview, "overviewBody": overviewBody,
    ]

    static let page = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
        <title>{{title}} · ingestd</title><link rel="icon" href="data:,">
        <link rel="stylesheet" href="/console/assets/console.css"><script src="/console/assets/console.js" defer></script></head>
        <body data-live="{{live}}" data-version="{{version}}">
        <header><a class="brand" href="/console/">ingestd</a>
        <nav class="tabs">{{#tabs}}<a href="{{href}}" class="{{class}}">{{label}}{{#count}} <span class="count" data-count="{{key}}">{{count}}</span>{{/count}}</a>{{/tabs}}</nav>
        <form class="who" method="post" action="/console/logout"><span>{{role}}</span> <button>Log out</button></form></header>
        {{#banner}}<p class="banner" role="alert">{{banner}}</p>{{/banner}}
        {{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
        <p id="stale" class="stale" hidden>The queue changed since this page was read: <a href="">read it again</a></p>
        <main>{{{body}}}</main>
        <footer>Read at <time id="taken">{{taken}}</time> · ingestd {{appVersion}}</footer>
        </body></html>
        """

    static let login = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>Log in · ingestd</title><link rel="icon" href="data:,">
        <link rel="stylesheet" href="/console/assets/console.css"></head>
        <body class="login"><main><h1>ingestd console</h1>
        {{#message}}<p class="banner" role="alert">{{message}}</p>{{/message}}
        <form method="post" action="/console/login"><label>Token <input type="password" name="token" autocomplete="current-password" autofocus></label>
        <input type="hidden" name="back" value="{{back}}"><button>Log in</button></form>
        <p class="hint">A token from the console's tokens file (<code>read</code> or <code>operate</code>).</p></main></body></html>
        """

    static let jobs = """
        <form class="filter" method="get" action="/console/jobs">
        <input type="hidden" name="state" value="{{filter.state}}">
        <label>id or input <input name="q" value="{{filter.q}}"></label>
        <label>host <input name="host" value="{{filter.host}}" size="12"></label>
        <label>reason <input name="code" value="{{filter.code}}" size="14"></label>
        <label>attempts ≥ <input name="attempts" value="{{filter.attempts}}" size="2" inputmode="numeric"></label>
        <label>changed within <select name="since">{{#sinceOptions}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/sinceOptions}}</select></label>
        <button>Filter</button> <a href="/console/jobs?state={{filter.state}}">clear</a></form>
        <form method="post" action="/console/jobs/retry" class="jobs">
        <input type="hidden" name="back" value="{{back}}">
        {{#retry}}<p class="actions"><input type="hidden" name="rejected" value="{{rejected}}">
        <button name="action" value="selected">Retry selected</button>
        {{#all}}<input type="hidden" name="state" value="{{filter.state}}"><input type="hidden" name="q" value="{{filter.q}}">
        <input type="hidden" name="host" value="{{filter.host}}"><input type="hidden" name="code" value="{{filter.code}}">
        <input type="hidden" name="attempts" value="{{filter.attempts}}"><input type="hidden" name="since" value="{{filter.since}}">
        <input type="hidden" name="confirm" value="{{count}}">
        <button name="action" value="all">Retry all {{count}} matching</button>{{/all}}</p>{{/retry}}
        {{#deleteSelected}}<p class="actions delete"><label>Code <select name="deleteCode">{{#codes}}<option>{{code}}</option>{{/codes}}</select></label>
        <label>Reason <input name="deleteReason" maxlength="1000" placeholder="why they are taken down"></label>
        <button formaction="/console/jobs/delete" name="action" value="delete">Delete selected</button></p>{{/deleteSelected}}
        <table><thead><tr><th></th><th>id</th><th>state</th><th>input</th><th>host</th><th>attempts</th><th>reason</th><th>queued</th><th>changed</th></tr></thead>
        <tbody id="live">{{> rows}}</tbody></table></form>
        {{#next}}<p><a rel="next" href="{{next}}">Next page</a></p>{{/next}}
        """

    static let rows = """
        {{#rows}}<tr data-id="{{id}}" class="state-{{state}}"><td>{{#retryable}}<input type="checkbox" name="id[]" value="{{id}}" aria-label="select {{id}}">{{/retryable}}</td>
        <td><a href="/console/jobs/{{id}}">{{id}}</a></td><td class="state">{{state}}{{#playable}} · playable{{/playable}}{{#progress}} · {{progress}}{{/progress}}</td>
        <td class="input">{{input}}</td><td>{{host}}</td><td>{{attempts}}</td><td>{{code}}</td>
        <td><time datetime="{{createdISO}}">{{created}}</time></td><td><time datetime="{{changedISO}}">{{changed}}</time></td></tr>
        {{/rows}}{{^rows}}<tr><td colspan="9" class="empty">No jobs.</td></tr>{{/rows}}
        """

    static let job = """
        <h1>{{id}} <span class="state state-{{state}}">{{state}}</span></h1>
        <dl class="facts"><dt>attempts</dt><dd>{{attempts}}</dd>
        {{#progress}}<dt>progress</dt><dd>{{progress}}</dd>{{/progress}}
        {{#playable}}<dt>playable</dt><dd>yes, while it is made{{#ahead}}: {{ahead}} ahead of real time{{/ahead}}</dd>{{/playable}}
        {{#reason}}<dt>reason</dt><dd><code>{{code}}</code> {{message}}</dd>{{/reason}}
        {{#output}}<dt>output</dt><dd><code>{{output}}</code></dd>{{/output}}
        {{#playback}}<dt>playback</dt><dd data-playback="{{playback}}">{{playback}}</dd>{{/playback}}</dl>
        {{#changePlayback}}<form method="post" action="/console/jobs/playback" class="playback"><input type="hidden" name="id" value="{{id}}">
        <input type="hidden" name="back" value="/console/jobs/{{id}}"><input type="hidden" name="policy" value="{{to}}">
        <button>Make it {{to}}</button></form>{{/changePlayback}}
        <h2>Attempts</h2><table class="attempts"><thead><tr><th>#</th><th>host</th><th>waited in the queue</th><th>started</th><th>took</th><th>result</th><th>reason</th></tr></thead><tbody>
        {{#attemptRows}}<tr class="attempt" data-number="{{number}}" data-result="{{result}}"><td>{{number}}</td><td>{{host}}</td><td>{{waited}}</td><td><time datetime="{{startedISO}}" title="{{startedISO}}">{{started}}</time></td>
        <td>{{took}}</td><td>{{result}}</td><td><code>{{code}}</code>
        {{#log}}<details><summary>the job process's last lines</summary><pre class="log">{{log}}</pre></details>{{/log}}</td></tr>{{/attemptRows}}
        {{^attemptRows}}<tr><td colspan="7" class="empty">No attempt yet.</td></tr>{{/attemptRows}}</tbody></table>
        {{#retry}}<form method="post" action="/console/jobs/retry"><input type="hidden" name="id" value="{{id}}">
        <input type="hidden" name="rejected" value="{{rejected}}"><input type="hidden" name="back" value="/console/jobs/{{id}}">
        <button>Retry this job</button></form>{{/retry}}
        {{#deletion}}<h2>Deleted</h2><dl><dt>when</dt><dd>{{at}}</dd><dt>why</dt><dd><code>{{code}}</code> {{text}}</dd>
        <dt>by</dt><dd>{{by}}</dd><dt>removal</dt><dd>{{state}}; {{purged}} CDN paths to purge</dd></dl>{{/deletion}}
        {{#delete}}<form method="post" action="/console/jobs/delete" class="delete"><input type="hidden" name="id" value="{{id}}">
        <input type="hidden" name="back" value="/console/jobs/{{id}}">
        <label>Code <select name="code">{{#codes}}<option>{{code}}</option>{{/codes}}</select></label>
        <label>Reason <input name="reason" required maxlength="1000" placeholder="why it is taken down"></label>
        <button>Delete this video</button></form>{{/delete}}
        {{#limits}}<h2>Against the limits</h2><table><thead><tr><th></th><th>source</th><th>limit</th></tr></thead><tbody>
        {{#rows}}<tr><td>{{name}}</td><td>{{value}}</td><td>{{limit}}</td></tr>{{/rows}}</tbody></table>{{/limits}}
        {{#ladder}}<h2>Ladder</h2><table><thead><tr><th>rung</th><th>size</th><th>average bitrate</th><th>bytes (from it)</th><th>segments</th><th>codec</th></tr></thead><tbody>
        {{#renditions}}<tr><td>{{name}}</td><td>{{size}}</td><td>{{bitrate}}</td><td>{{bytes}}</td><td>{{segments}}</td><td>{{codecs}}</td></tr>{{/renditions}}</tbody></table>{{/ladder}}
        {{#media}}<div class="media">{{#poster}}<img src="{{poster}}" alt="poster of {{id}}" width="180">{{/poster}}
        <video id="player" controls muted playsinline preload="metadata" src="{{master}}" width="360"></video></div>{{/media}}
        <h2>History</h2><table class="history"><thead><tr><th>when</th><th>what happened</th></tr></thead><tbody>
        {{#history}}<tr data-event="{{event}}"><td><time datetime="{{atISO}}" title="{{atISO}}">{{at}}</time></td><td>{{text}}
        <details><summary>raw</summary><code>{{event}} {{data}}</code></details></td></tr>{{/history}}
        {{^history}}<tr><td colspan="2" class="empty">No events kept.</td></tr>{{/history}}</tbody></table>
        """

    static let overview = """
        <div id="live">{{> overviewBody}}</div>
        """

    static let overviewBody = """
        <nav class="windows">{{#windows}}<a href="{{href}}"{{#current}} aria-current="page"{{/current}}>{{label}}</a> {{/windows}}</nav>
        {{#activity}}<section class="activity" data-window="{{window}}"><p class="summary">Last {{window}}: <b>{{total.published}}</b> published,
        <b>{{total.rejected}}</b> rejected, <b>{{total.failed}}</b> failed; {{total.playable}} playable after p50 <b>{{total.p50}}</b>, p95
        <b>{{total.p95}}</b>; <b>{{queued}}</b> queued now.</p>{{{svg}}}
        <table class="hosts"><thead><tr><th>host</th><th>published</th><th>rejected</th><th>failed</th><th>playable p50</th><th>p95</th><th>published over the {{window}}</th></tr></thead><tbody>
        {{#hosts}}<tr><td>{{name}}</td><td>{{published}}</td><td>{{rejected}}</td><td>{{failed}}</td><td>{{p50}}</td><td>{{p95}}</td><td>{{{spark}}}</td></tr>{{/hosts}}
        {{^hosts}}<tr><td colspan="7" class="empty">No attempt ended in this window.</td></tr>{{/hosts}}</tbody></table></section>{{/activity}}
        <h2>Failures, last day</h2><table><thead><tr><th>state</th><th>reason</th><th>last hour</th><th>last day</th><th></th></tr></thead><tbody>
        {{#failures}}<tr><td>{{state}}</td><td><code>{{code}}</code></td><td>{{lastHour}}</td><td>{{lastDay}}</td>
        <td><a href="/console/jobs?state={{state}}&amp;code={{code}}&amp;since=1d">see and retry these</a></td></tr>{{/failures}}
        {{^failures}}<tr><td colspan="5" class="empty">None.</td></tr>{{/failures}}</tbody></table>
        <h2>Leases</h2><table><thead><tr><th>job</th><th>holder</th><th>token</th><th>expires in</th></tr></thead><tbody>
        {{#leases}}<tr><td><a href="/console/jobs/{{id}}">{{id}}</a></td><td>{{holder}}</td><td>{{token}}</td><td>{{expires}}</td></tr>{{/leases}}
        {{^leases}}<tr><td colspan="4" class="empty">No job is running.</td></tr>{{/leases}}</tbody></table>
        {{#fleet}}<h2>Hosts</h2><table><thead><tr><th>worker</th><th>ready</th><th>last heartbeat</th><th>running</th><th>version</th><th>up since</th></tr></thead><tbody>
        {{#hosts}}<tr class="{{class}}"><td>{{name}}</td><td>{{ready}}</td><td>{{seen}}</td><td>{{running}}</td><td>{{version}}</td><td>{{started}}</td></tr>{{/hosts}}
        {{^hosts}}<tr><td colspan="6" class="empty">No worker has reported in the last day.</td></tr>{{/hosts}}</tbody></table>{{/fleet}}
        """
}
