package grid

// pageHTML is the grid's template. The matrices and their tooltips work
// without JavaScript; the script at the end only draws a clicked pair's
// history.
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
{{with .RefreshSeconds}}<meta http-equiv="refresh" content="{{.}}">{{end}}
<title>{{.Title}}</title>
<link rel="icon" href="data:,">
<style>{{.UPlotCSS}}</style>
<style>
body { font-family: system-ui, sans-serif; margin: 1.2em auto; max-width: 1200px; padding: 0 1em; color: #222; }
h1 { font-size: 1.4em; margin-bottom: .2em; } h2 { font-size: 1.15em; margin: 1.4em 0 .2em; }
.note { color: #555; font-size: .9em; margin: .2em 0; }
code { background: #f3f3f3; padding: 0 .25em; }
.legend span { display: inline-block; padding: .1em .6em; margin-right: .4em; border-radius: 3px; font-size: .85em; }
table.grid { border-collapse: collapse; margin: .6em 0 1em; }
table.grid th { background: #f3f3f3; border: 1px solid #ccc; padding: .3em .6em; font-weight: 600; }
table.grid th.corner { font-weight: normal; color: #555; font-size: .8em; }
table.grid td { border: 1px solid #ccc; padding: 2px; min-width: 7.5em; height: 3.2em; vertical-align: middle; }
table.grid td.self { background: repeating-linear-gradient(45deg, #fafafa, #fafafa 4px, #eee 4px, #eee 8px); }
.half { display: block; width: 100%; border: 0; margin: 1px 0; padding: .2em .3em; font: inherit; font-size: .85em;
  font-variant-numeric: tabular-nums; text-align: left; white-space: nowrap; cursor: pointer; border-radius: 2px; }
.oneway .half { padding: .75em .3em; }
table.summary td { min-width: 9em; height: auto; }
.block { display: block; width: 100%; border: 0; padding: .3em .4em; font: inherit; font-size: .8em; text-align: left; cursor: pointer; border-radius: 2px; }
.block .worst { display: block; font-weight: 600; white-space: nowrap; }
.blockview { border: 1px solid #ccc; border-radius: 4px; padding: .4em .8em; margin: .6em 0; overflow-x: auto; }
.blockview[hidden] { display: none; }
tr.found th { outline: 3px solid #1f4fa0; }
.half:focus-visible { outline: 2px solid #1f4fa0; outline-offset: 1px; }
.green { background: #2f9e44; color: #fff; }
.amber { background: #f2a900; color: #1a1a1a; }
.red { background: #d0312d; color: #fff; }
.grey { background: #b8b8b8; color: #1a1a1a; }
.unmeasured { background: #fff repeating-linear-gradient(135deg, #fff, #fff 5px, #ececec 5px, #ececec 10px); color: #555; box-shadow: inset 0 0 0 1px #bbb; }
#history { border: 1px solid #ccc; border-radius: 4px; padding: .6em 1em; margin: 1em 0; background: #fcfcfc; }
#history[hidden] { display: none; }
#history .close { float: right; }
#history .chart { margin: .6em 0; }
#history ul { font-size: .9em; }
#history li.route { color: #7048e8; }
footer { margin-top: 2em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="note">{{with .Generated}}As of {{.}}. {{end}}Sources are rows, destinations columns; in each cell → is the source's data to the destination, ← the data back. Hover a cell for its last values, click it for the pair's history.</p>
<p class="legend note"><span class="green">green: within thresholds</span><span class="amber">amber: past a warning threshold, or a run missed</span><span class="red">red: past a critical threshold, or a run failed</span><span class="grey">grey: no recent result</span><span class="unmeasured">not measured: not scheduled, or no result yet</span></p>
<noscript><p class="note">JavaScript is off: the cells and their hover text work; the history charts are not drawn.</p></noscript>
{{if .Summarised}}<p class="note">{{len .Hosts}} hosts in {{.GroupCount}} groups: each test is shown as its groups of hosts, sources' groups as rows. A cell is a block of pairs: its worst pair and its pairs by colour. Click one for its hosts.</p>
<form id="search" class="note" role="search"><label>Find a host: <input id="host-search" list="host-list" autocomplete="off" placeholder="host name"></label> <button type="submit">find</button> <span id="search-result" aria-live="polite"></span></form>
<datalist id="host-list">{{range .HostGroups}}<option value="{{.Host}}" data-group="{{.Group}}">{{end}}</datalist>{{end}}
{{if not .Tests}}<p class="note" id="empty">The mesh has no tests.</p>{{end}}
{{range .Tests}}
<section class="test" id="{{.Anchor}}" data-test="{{.Name}}"{{if .Summary2}} data-index="{{.Index}}"{{end}}>
<h2>{{.Name}}</h2>
{{with .Command}}<p class="note"><code>{{.}}</code></p>{{end}}
<p class="note">{{.Legend}}{{with .Summary}} Now: {{range $i, $s := .}}{{if $i}}, {{end}}{{$s}}{{end}}.{{end}}</p>
{{if .Summary2}}{{template "summary" .}}{{else}}{{template "matrix" .}}
{{end}}</section>
{{end}}
<section id="history" hidden aria-live="polite">
<button type="button" class="close">close</button>
<h2 id="history-title"></h2>
<p class="note" id="history-note"></p>
<div id="history-charts"></div>
<ul id="history-events"></ul>
</section>
<footer class="note"><details><summary>Charts are drawn by uPlot (MIT licence)</summary><pre>{{.License}}</pre></details></footer>
<script>{{.UPlotJS}}</script>
<script>
(function () {
  var histories = {{.Histories}};
  var colours = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];
  var panel = document.getElementById("history"), chartsEl = document.getElementById("history-charts");
  var fmt = function (v) { return v == null ? "—" : (Math.abs(v) >= 100 ? v.toFixed(0) : +v.toPrecision(4)).toString(); };
  var utc = function (ts) { return uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"); };
  var hhmm = uPlot.fmtDate("{HH}:{mm}"), stamp = uPlot.fmtDate("{YYYY}-{MM}-{DD} {HH}:{mm}");
  window.wireperfCharts = [];
  // routeMarks draws a dashed vertical line at each route change.
  function routeMarks(routes) {
    return { hooks: { draw: [function (u) {
      var ctx = u.ctx, top = u.bbox.top, bottom = u.bbox.top + u.bbox.height;
      ctx.save();
      ctx.strokeStyle = "#7048e8";
      ctx.lineWidth = 2;
      ctx.setLineDash([6, 4]);
      routes.forEach(function (r) {
        var x = u.valToPos(r.t, "x", true);
        if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) { return; }
        ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, bottom); ctx.stroke();
      });
      ctx.restore();
    }] } };
  }
  function show(id) {
    var h = histories[id];
    window.wireperfCharts.forEach(function (u) { u.destroy(); });
    window.wireperfCharts = [];
    chartsEl.textContent = "";
    var events = document.getElementById("history-events");
    events.textContent = "";
    document.getElementById("history-title").textContent = h ? h.title : "No history";
    document.getElementById("history-note").textContent = h ? h.x.length + " runs; times in UTC. Drag to zoom, double-click to reset." : "No past run of this pair is on record.";
    panel.hidden = false;
    if (h) {
      var width = Math.max(320, Math.min(panel.clientWidth - 40, 1100));
      h.charts.forEach(function (c) {
        var el = document.createElement("div");
        el.className = "chart";
        chartsEl.appendChild(el);
        var series = [{ label: "time (UTC)", value: function (u, v) { return v == null ? "—" : stamp(utc(v)); } }];
        c.names.forEach(function (n, i) {
          series.push({ label: n, stroke: colours[i % colours.length], width: 2, spanGaps: true,
            points: { show: true, size: 5 }, value: function (u, v) { return fmt(v); } });
        });
        var u = new uPlot({ title: c.title + " (" + c.unit + ")", width: width, height: 220, tzDate: utc, plugins: [routeMarks(h.routes)],
          axes: [{ values: function (u, vals) { return vals.map(function (v) { return hhmm(utc(v)); }); } }, { label: c.unit, size: 60 }], series: series }, [h.x].concat(c.series), el);
        window.wireperfCharts.push(u);
      });
      h.events.forEach(function (e) {
        var li = document.createElement("li");
        li.textContent = e.at + " " + e.dir + ": " + e.state + (e.why ? " (" + e.why + ")" : "");
        events.appendChild(li);
      });
      h.routes.forEach(function (r) {
        var li = document.createElement("li");
        li.className = "route";
        li.textContent = r.at + " " + r.dir + ": route changed: " + r.from + " → " + r.to;
        events.appendChild(li);
      });
    }
    panel.scrollIntoView({ block: "nearest" });
  }
  var pageHistories = histories;
  document.addEventListener("click", function (ev) {
    var b = ev.target.closest && ev.target.closest("button.half");
    if (b) {
      var block = b.closest(".blockview");
      histories = block ? block.histories : pageHistories;
      show(+b.getAttribute("data-history"));
      return;
    }
    var s = ev.target.closest && ev.target.closest("button.block");
    if (s) { openBlock(s.getAttribute("data-test"), s.getAttribute("data-from"), s.getAttribute("data-to")); }
  });
  // openBlock fetches one block of a summarised test (its hosts' cells,
  // drawn by the server) into the test's block view.
  function openBlock(test, from, to, then) {
    var view = document.getElementById("block-" + test);
    view.hidden = false;
    view.textContent = "Loading " + from + " → " + to + "…";
    var q = "grid/block?test=" + encodeURIComponent(test) + "&from=" + encodeURIComponent(from) + "&to=" + encodeURIComponent(to);
    return fetch(q, { credentials: "same-origin" }).then(function (r) {
      if (!r.ok) { return r.text().then(function (t) { throw new Error(r.status + " " + t); }); }
      return r.text();
    }).then(function (html) {
      view.innerHTML = html;
      var data = view.querySelector("script.block-histories");
      view.histories = data ? JSON.parse(data.textContent) : [];
      view.setAttribute("data-from", from);
      view.setAttribute("data-to", to);
      if (then) { then(view); } else { view.scrollIntoView({ block: "nearest" }); }
    }).catch(function (e) { view.textContent = "Could not load the block: " + e.message; });
  }
  var search = document.getElementById("search");
  if (search) {
    search.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var name = document.getElementById("host-search").value.trim(), out = document.getElementById("search-result");
      var opt = Array.from(document.querySelectorAll("#host-list option")).find(function (o) { return o.value === name; });
      if (!opt) { out.textContent = "no host named " + name; return; }
      var group = opt.getAttribute("data-group");
      out.textContent = name + " is in " + group;
      var first = document.querySelector("section.test");
      openBlock(first.getAttribute("data-index"), group, group, function (view) {
        var row = Array.from(view.querySelectorAll("th[scope=row]")).find(function (th) { return th.textContent === name; });
        if (row) { row.parentNode.classList.add("found"); row.scrollIntoView({ block: "center" }); }
      });
    });
  }
  panel.querySelector(".close").addEventListener("click", function () { panel.hidden = true; });
})();
</script>
</body>
</html>
`

// matrixHTML is a test's host × host matrix, on the page and in a block;
// summary is a summarised test's group × group matrix.
const matrixHTML = `{{define "matrix"}}<table class="grid{{if .OneWay}} oneway{{end}}">
<tr><th class="corner">source ↓ destination →</th>{{range .Columns}}<th scope="col">{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr><th scope="row">{{.Host}}</th>{{range .Cells}}{{if .Self}}<td class="self"></td>{{else}}<td data-src="{{.Src}}" data-dst="{{.Dst}}">{{$h := .History}}{{range .Halves}}<button type="button" class="half {{.Colour}}" data-dir="{{.Direction}}" data-colour="{{.Colour}}" data-history="{{$h}}" title="{{.Title}}">{{if eq .Direction "reverse"}}←{{else}}→{{end}} {{.Label}}</button>{{end}}</td>{{end}}{{end}}</tr>
{{end}}</table>{{end}}
{{define "summary"}}{{$t := .Index}}<table class="grid summary">
<tr><th class="corner">source group ↓ destination group →</th>{{range .Summary2.Groups}}<th scope="col">{{.}}</th>{{end}}</tr>
{{range .Summary2.Rows}}<tr><th scope="row">{{.Group}}</th>{{range .Cells}}<td data-from="{{.From}}" data-to="{{.To}}"><button type="button" class="block {{.Colour}}" data-test="{{$t}}" data-from="{{.From}}" data-to="{{.To}}" data-colour="{{.Colour}}" title="{{.Title}}"><span class="worst">{{.Worst}}</span>{{range $i, $c := .Counts}}{{if $i}}, {{end}}{{$c}}{{end}}</button></td>{{end}}</tr>
{{end}}</table>
<div class="blockview" id="block-{{$t}}" hidden></div>{{end}}`

// blockHTML is one block of a summarised test, fetched by the page.
const blockHTML = `<h3>{{.Name}}: {{.From}} → {{.To}}</h3>
{{template "matrix" .}}
<script type="application/json" class="block-histories">{{.Histories}}</script>`
