package report

// pageHTML is the report's template. The static figures are <img> of
// files in the page's directory; the interactive charts are drawn by the
// script at the end and need nothing but the page itself. A chart with a
// static figure of the same data shows once: the chart where the script
// drew it (the figure then only a download), else the figure.
const pageHTML = `{{define "downloads"}}<span class="downloads">download <a class="download" href="{{.File}}" download>SVG</a>{{with .PNG}} <a class="download" href="{{.}}" download>PNG</a>{{end}}</span>{{end}}
{{define "chart"}}<figure class="chart-figure"><div class="chart" id="{{.ID}}"></div>
{{with .Figure}}{{if .File}}<img class="static" src="{{.File}}" alt="{{.Alt}}" loading="lazy">{{end}}<figcaption>{{with .Caption}}{{.}} {{end}}{{if .File}}{{template "downloads" .}}{{end}}</figcaption>{{end}}</figure>
{{end}}
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>{{.UPlotCSS}}</style>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1100px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0 1em; }
table.host { display: inline-table; margin-right: 1em; vertical-align: top; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
table.results td, table.cpu td { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: #f6f6f6; padding: .6em; overflow-x: auto; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption, .note { color: #555; font-size: .9em; }
.chart { margin: 1em 0; min-height: 20px; }
.empty { padding: 1em; background: #fff7e0; border: 1px solid #e8d28a; }
details { margin: .6em 0; } summary { cursor: pointer; }
.verdict { background: #eef5ff; border-left: 3px solid #4a7bd0; padding: .3em .6em; margin: .3em 0; }
figure.drawn img.static { display: none; }
.downloads { margin-left: .3em; } .downloads a { margin-left: .3em; }
@media print { .chart, .downloads { display: none; } figure.drawn img.static { display: inline; } }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="note">{{with .Generated}}Written {{.}}{{end}}{{with .Version}} by wireperf {{.}}{{end}}.
Interactive charts: drag to zoom, double-click to reset, hover for values, click a legend entry to hide its series.</p>
<noscript><p class="note">JavaScript is off: the tables and the static figures below hold every number; the interactive charts are not drawn.</p></noscript>
{{if .Empty}}<p class="empty" id="empty">{{.Empty}}</p>{{end}}
{{range .Sections}}
<section class="campaign">
<h2>{{.Name}}</h2>
{{with .Created | time}}<p class="note">Created {{.}}</p>{{end}}
{{if .Spec}}<h3>Specification{{with .SpecFormat}} ({{.}}){{end}}</h3>
<pre class="spec">{{.Spec}}</pre>{{end}}
{{if .Verdicts}}<h3>Verdicts</h3>
{{range .Verdicts}}<p class="verdict">{{.}}</p>
{{end}}{{end}}
{{if .Empty}}<p class="empty">{{.Empty}}</p>{{else}}
{{if .Hosts}}<h3>Hosts</h3>
{{range .Hosts}}<table class="host">
<tr><th colspan="2">{{.Role}}: {{.Hostname}}</th></tr>
<tr><td>kernel</td><td>{{.Kernel}}</td></tr>
{{range .Limits}}<tr><td>{{.Key}}</td><td>{{.Value}}</td></tr>
{{end}}</table>
{{end}}{{end}}
{{with .Table}}<h3>Results</h3>
<table class="results">
<caption>{{.Caption}}</caption>
{{range $i, $row := .Grid}}<tr>{{range $j, $c := $row}}{{if or (eq $i 0) (eq $j 0)}}<th>{{$c}}</th>{{else}}<td>{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</table>
{{end}}
{{if .CPU}}<h3>CPU and memory</h3>
{{range .CPU}}<table class="cpu">
<caption>{{.Caption}}</caption>
{{range $i, $row := .Grid}}<tr>{{range $j, $c := $row}}{{if or (eq $i 0) (eq $j 0)}}<th>{{$c}}</th>{{else}}<td>{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</table>
{{end}}{{end}}
{{range .Charts}}{{template "chart" .}}{{end}}
{{range .Figures}}<figure><img src="{{.File}}" alt="{{.Alt}}">{{if or .Caption .File}}<figcaption>{{with .Caption}}{{.}} {{end}}{{if .File}}{{template "downloads" .}}{{end}}</figcaption>{{end}}</figure>
{{end}}
{{if .Runs}}<h3>Runs</h3>
{{range .Runs}}<details class="run" id="run-{{.ID}}">
<summary>run {{.ID}} — {{.State}}{{range .Axes}}, {{.Key}} {{.Value}}{{end}}</summary>
<table>
<tr><td>started</td><td>{{time .Started}}</td></tr>
{{with .Cmdline}}<tr><td>command</td><td><code>{{.}}</code></td></tr>{{end}}
{{with .Error}}<tr><td>error</td><td>{{.}}</td></tr>{{end}}
{{range .Summary}}<tr><td>{{.Key}}</td><td>{{.Value}}</td></tr>
{{end}}</table>
{{range .Verdicts}}<p class="verdict">{{.}}</p>
{{end}}
{{with .Chart}}{{template "chart" .}}{{end}}
{{range .HostCharts}}{{template "chart" .}}{{end}}
{{range .Figures}}<figure><img src="{{.File}}" alt="{{.Alt}}" loading="lazy">{{if or .Caption .File}}<figcaption>{{with .Caption}}{{.}} {{end}}{{if .File}}{{template "downloads" .}}{{end}}</figcaption>{{end}}</figure>
{{end}}
</details>
{{end}}{{end}}
{{end}}
</section>
{{end}}
<footer class="note"><details><summary>Charts are drawn by uPlot 1.6.32 (MIT licence)</summary><pre>{{.License}}</pre></details></footer>
<script>{{.UPlotJS}}</script>
<script>
(function () {
  var charts = {{.Charts}};
  var colours = {{.Colours}};
  var fmt = function (v) { return v == null ? "—" : (Math.abs(v) >= 100 ? v.toFixed(0) : +v.toPrecision(4)).toString(); };
  var bytes = function (v) {
    var units = ["", "K", "M", "G", "T"], i = 0;
    while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return +v.toPrecision(3) + units[i];
  };
  var xfmt = { bytes: bytes, seconds: function (v) { return +v.toPrecision(3) + " s"; } };
  window.wireperfCharts = [];
  charts.forEach(function (c) {
    var el = document.getElementById(c.id);
    if (!el) { return; }
    var fx = xfmt[c.xunit] || fmt;
    var series = [{ label: c.xlabel, value: function (u, v) { return v == null ? "—" : fx(v); } }];
    c.names.forEach(function (n, i) {
      series.push({ label: n, stroke: colours[i % colours.length], width: 2, spanGaps: true,
        points: { show: true, size: 6 }, value: function (u, v) { return fmt(v); } });
    });
    var width = Math.max(320, Math.min(el.clientWidth || 900, 1000));
    var u = new uPlot({
      title: c.title, width: width, height: 320,
      scales: { x: { time: false, distr: c.logx ? 3 : 1, log: c.xunit === "bytes" ? 2 : 10 } },
      axes: [{ label: c.xlabel, values: function (u, vals) { return vals.map(function (v) { return v == null ? "" : fx(v); }); } },
        { label: c.ylabel, size: 60 }],
      series: series
    }, c.data, el);
    // Drawn: the static figure of the same data stays a download only.
    if (el.parentNode && el.parentNode.classList.contains("chart-figure")) { el.parentNode.classList.add("drawn"); }
    window.wireperfCharts.push(u);
  });
})();
</script>
</body>
</html>
`
