/**
 * The dashboard's stylesheet, served as /dashboard/app.css (CSP `style-src 'self'`: no inline
 * styles anywhere). System fonts, readable at laptop widths, visible keyboard focus, and colours
 * that keep a 4.5:1 contrast; the diff marks lines with +/- as well as colour.
 */
export const STYLES = `
:root {
  --fg: #1b1f24; --muted: #57606a; --bg: #ffffff; --panel: #f6f8fa; --line: #d0d7de;
  --accent: #0b5cad; --add-bg: #dafbe1; --add-fg: #116329; --del-bg: #ffebe9; --del-fg: #a40e26;
  --warn-bg: #fff8c5; --fail: #c4302b; --calls: #0b5cad; --offers: #8250df;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 15px; line-height: 1.45;
  color: var(--fg); background: var(--bg);
}
* { box-sizing: border-box; }
body { margin: 0; }
h1 { font-size: 1.25rem; margin: 0; }
h2 { font-size: 1.15rem; margin: 1.2rem 0 .6rem; }
h3 { font-size: 1rem; margin: 0 0 .4rem; }
h4 { font-size: .9rem; margin: .8rem 0 .3rem; color: var(--muted); text-transform: uppercase; letter-spacing: .03em; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid #f0a500; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; }
.skip:focus { left: .5rem; background: var(--bg); padding: .3rem .6rem; z-index: 2; }
.top { display: flex; align-items: center; justify-content: space-between; gap: 1rem; flex-wrap: wrap;
  padding: .6rem 1.5rem; border-bottom: 1px solid var(--line); background: var(--panel); }
#session { display: flex; align-items: center; gap: .8rem; flex-wrap: wrap; }
main { max-width: 78rem; margin: 0 auto; padding: .5rem 1.5rem 3rem; }
main:focus { outline: none; }
.status, .alert { max-width: 78rem; margin: .5rem auto 0; padding: 0 1.5rem; }
.status:empty, .alert:empty { display: none; }
.status p, .alert p { margin: 0; padding: .5rem .8rem; border-radius: 6px; }
.status p { background: #ddf4ff; }
.alert p { background: var(--del-bg); color: var(--del-fg); font-weight: 600; }
button, input, select, textarea { font: inherit; }
button { cursor: pointer; border: 1px solid var(--line); background: var(--panel); color: var(--fg);
  padding: .3rem .8rem; border-radius: 6px; }
button:hover { background: #eaeef2; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.primary:hover { background: #094a8c; }
button.link { border: none; background: none; color: var(--accent); text-decoration: underline; padding: 0; }
button.danger { color: var(--del-fg); }
button[disabled] { opacity: .6; cursor: default; }
input[type=text], input[type=password], input[type=number], input:not([type]), textarea, select {
  border: 1px solid var(--line); border-radius: 6px; padding: .3rem .5rem; background: var(--bg); color: var(--fg); }
label { font-weight: 600; }
.field { display: flex; flex-direction: column; gap: .2rem; margin: .5rem 0; max-width: 28rem; }
.field .hint { font-weight: 400; color: var(--muted); font-size: .85rem; }
.field .error { color: var(--del-fg); font-size: .9rem; }
.field.invalid input { border-color: var(--del-fg); }
.inline { display: flex; align-items: center; gap: .5rem; flex-wrap: wrap; }
.signin { max-width: 30rem; margin: 3rem auto; padding: 1.5rem; border: 1px solid var(--line); border-radius: 8px; }
.tabs { display: flex; gap: .3rem; border-bottom: 1px solid var(--line); margin: .8rem 0 1rem; flex-wrap: wrap; }
.tabs button { border-radius: 6px 6px 0 0; border-bottom: none; }
.tabs button[aria-current=page] { background: var(--bg); border-color: var(--line); font-weight: 700;
  box-shadow: 0 2px 0 var(--bg); }
.card { border: 1px solid var(--line); border-radius: 8px; padding: .9rem 1rem; margin: 0 0 1rem; background: var(--bg); }
.card header { display: flex; justify-content: space-between; gap: 1rem; flex-wrap: wrap; align-items: baseline; }
.meta { color: var(--muted); font-size: .88rem; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 1rem; font-size: .8rem; border: 1px solid var(--line);
  background: var(--panel); }
.badge.proposed { background: var(--warn-bg); }
.line-edit { display: grid; grid-template-columns: 1fr auto; gap: .2rem .6rem; margin: .4rem 0; }
.line-edit textarea { width: 100%; }
.line-edit.dropped textarea { opacity: .5; text-decoration: line-through; }
.line-edit .line-error { grid-column: 1 / -1; color: var(--del-fg); font-size: .9rem; margin: 0; }
.line-edit .line-error:empty { display: none; }
.filters, .bulk { display: flex; gap: .8rem; align-items: end; flex-wrap: wrap; }
.bulk-results .ok { color: var(--add-fg); }
.bulk-results .failed { color: var(--del-fg); }
.held { background: var(--warn-bg); border: 1px solid var(--line); border-radius: .3rem; padding: .2rem .6rem; margin: .5rem 0; }
.badge.applied { background: var(--add-bg); color: var(--add-fg); }
.badge.dismissed, .badge.undone { color: var(--muted); }
.badge.status-ok { background: var(--add-bg); color: var(--add-fg); }
.badge.status-failing { background: var(--del-bg); color: var(--del-fg); }
.card .error { color: var(--del-fg); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; margin: .4rem 0; font-size: .9rem; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
.cols { display: grid; grid-template-columns: repeat(auto-fit, minmax(22rem, 1fr)); gap: 1rem; }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem;
  white-space: pre-wrap; word-break: break-word; margin: .3rem 0; font-size: .85rem; }
.diff { padding: .4rem 0; }
.diff .ln { display: block; padding: 0 .8rem; }
.diff .add { background: var(--add-bg); color: var(--add-fg); text-decoration: none; }
.diff .del { background: var(--del-bg); color: var(--del-fg); }
table { border-collapse: collapse; width: 100%; margin: .3rem 0; font-size: .9rem; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--panel); font-weight: 600; }
ul.lines { margin: .2rem 0; padding-left: 1.2rem; }
details { margin: .4rem 0; }
summary { cursor: pointer; font-weight: 600; padding: .2rem 0; }
.actions { display: flex; gap: .6rem; align-items: end; flex-wrap: wrap; margin-top: .8rem;
  padding-top: .6rem; border-top: 1px solid var(--line); }
.empty { color: var(--muted); font-style: italic; }
.chart { display: block; max-width: 100%; height: auto; }
.legend { display: flex; gap: 1rem; font-size: .85rem; color: var(--muted); }
.legend .key-calls { color: var(--calls); } .legend .key-failures { color: var(--fail); }
.legend .key-offers { color: var(--offers); }
.chart .bar-calls { fill: var(--calls); } .chart .bar-failed { fill: var(--fail); }
.chart .line-offers { fill: none; stroke: var(--offers); stroke-width: 2; }
.chart .axis-line { stroke: var(--line); } .chart .axis { fill: var(--muted); font-size: 11px; }
.chart .line-hits { fill: none; stroke: var(--offers); stroke-width: 2; } .chart .dot-hit { fill: var(--offers); }
.chart .marker-applied { stroke: var(--calls); stroke-width: 2; stroke-dasharray: 4 3; }
.chart .marker-undone { stroke: var(--fail); stroke-width: 2; stroke-dasharray: 2 3; }
.key-hits { color: var(--offers); } .key-applied { color: var(--calls); } .key-undone { color: var(--fail); }
.columns { display: flex; gap: 2rem; flex-wrap: wrap; }
button.link { background: none; border: none; padding: 0; color: inherit; text-decoration: underline; cursor: pointer; font: inherit; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;
