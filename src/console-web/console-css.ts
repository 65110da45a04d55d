// The console's one stylesheet, served at /console/assets/console.css (no build step, no CDN).
export const CONSOLE_CSS = `
:root { --fg: #1d232b; --muted: #5b6675; --line: #d7dde5; --bg: #f6f8fa; --accent: #0b5cad; --bad: #b42318; --ok: #137333; --warn: #8a5a00; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
a:focus, button:focus, input:focus, select:focus, textarea:focus, .rule:focus { outline: 3px solid #7fb0e6; outline-offset: 1px; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 8px; top: 8px; background: #fff; padding: 4px 8px; z-index: 2; }
header { background: #fff; border-bottom: 1px solid var(--line); padding: 8px 24px; }
header nav { display: flex; gap: 16px; align-items: center; flex-wrap: wrap; }
.brand { font-weight: 700; margin-right: 8px; }
.sign-out { margin-left: auto; }
.trail { list-style: none; display: flex; gap: 6px; padding: 0; margin: 6px 0 0; color: var(--muted); font-size: 14px; }
.trail li + li::before { content: "›"; margin-right: 6px; }
main { max-width: 1200px; margin: 0 auto; padding: 16px 24px 48px; }
section > h2:first-child { margin-top: 4px; }
h1 { font-size: 24px; margin: 8px 0 16px; } h2 { font-size: 18px; margin: 28px 0 8px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 12px 16px; margin-bottom: 16px; }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; background: #e8ecf1; }
.badge-success, .badge-active, .badge-done, .badge-delivered, .badge-processed, .badge-uploaded, .badge-met, .badge-published,
.badge-in_the_feed, .badge-enabled {
  background: #e4f4e8;
  color: var(--ok);
}
.badge-failed, .badge-error, .badge-disabled, .badge-failure, .badge-high, .badge-below, .badge-held, .badge-left_out, .badge-excluded {
  background: #fde8e6;
  color: var(--bad);
}
/* A run that succeeded, but whose exports left products out or were held: success, marked. */
.badge-success_with_warnings { background: #e4f4e8; color: var(--warn); box-shadow: inset 0 0 0 1px #d99a00; }
.badge-info { background: #e6f0fb; color: var(--accent); }
.badge-running, .badge-queued, .badge-pending, .badge-warning, .badge-paused_upload, .badge-medium,
.badge-locked, .badge-locked_upload, .badge-locked_processing {
  background: #fff3d6;
  color: var(--warn);
}
.error { color: var(--bad); } .muted { color: var(--muted); }
form.inline { display: inline; }
button { font: inherit; padding: 5px 12px; border: 1px solid var(--accent); background: var(--accent); color: #fff; border-radius: 4px; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
input, select { font: inherit; padding: 4px 6px; border: 1px solid #9aa6b4; border-radius: 4px; max-width: 100%; box-sizing: border-box; }
/* A field never wider than its column: a size="50" input made the rule editor 489 px wide on a 390 px screen. */
textarea { max-width: 100%; box-sizing: border-box; }
label { font-weight: 600; margin-right: 4px; }
.filters { display: flex; gap: 12px; flex-wrap: wrap; align-items: end; margin-bottom: 8px; }
.filters div { display: flex; flex-direction: column; min-width: 0; max-width: 100%; }
.sign-in {
  max-width: 520px;
  background: #fff;
  border: 1px solid var(--line);
  padding: 16px;
  border-radius: 6px;
  display: flex;
  flex-direction: column;
  gap: 8px;
}
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 16px; }
.chart { position: relative; height: 220px; }
.scroll { overflow-x: auto; }
.pager { display: flex; gap: 12px; margin-top: 8px; }
.live { padding: 8px 12px; border-left: 4px solid var(--accent); background: #eef5fc; margin-bottom: 16px; }
.notice { padding: 8px 12px; border-left: 4px solid var(--ok); background: #eef8f0; margin: 0 0 16px; }
section.held { border-left: 6px solid var(--bad); background: #fff7f6; }
section.held h2 { font-size: 17px; }
.figures { font-size: 16px; }
h1 { overflow-wrap: anywhere; }
th[scope=row] { font-weight: 600; color: var(--fg); white-space: nowrap; }
details summary { cursor: pointer; color: var(--accent); margin: 6px 0; }
td code { overflow-wrap: anywhere; }
pre { white-space: pre-wrap; word-break: break-all; font-size: 12px; background: var(--bg); padding: 6px; margin: 4px 0; }
.cards {
  display: flex;
  gap: 12px;
  flex-wrap: wrap;
  } .card { background: #fff;
  border: 1px solid var(--line);
  border-radius: 6px;
  padding: 8px 14px;
  min-width: 140px;
}
.card strong { display: block; font-size: 20px; }
.rules { list-style: none; padding: 0; margin: 0; }
.rule { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; margin-bottom: 8px; }
.rule-words { margin: 0 0 6px; }
.rule-buttons { display: flex; gap: 8px; flex-wrap: wrap; align-items: center; }
a.button { display: inline-block; padding: 5px 12px; background: var(--accent); color: #fff; border-radius: 4px; text-decoration: none; }
.fields, fieldset.row { display: flex; gap: 12px; flex-wrap: wrap; align-items: end; }
fieldset.row { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 8px; padding: 8px 12px; }
fieldset.row[aria-describedby] { border-color: var(--bad); }
.fields > div, fieldset.row > div { display: flex; flex-direction: column; min-width: 0; max-width: 100%; }
.fields > div.check, fieldset.row > div.check, .filters div.check { flex-direction: row; align-items: center; gap: 4px; }
fieldset.row > p.error { flex-basis: 100%; margin: 0; }
textarea { font: inherit; padding: 4px 6px; border: 1px solid #9aa6b4; border-radius: 4px; min-width: 240px; }
textarea.code { font-family: ui-monospace, monospace; font-size: 13px; width: 100%; }
[aria-invalid=true] { border-color: var(--bad); }
small { display: block; font-size: 12px; max-width: 320px; }
[hidden] { display: none !important; }
.default-submit { position: absolute; left: -9999px; }
.form-buttons { display: flex; gap: 12px; align-items: center; }
tr.current { background: #eef5fc; }
table.changes { font-size: 13px; }
table.changes th, table.changes td { padding: 2px 6px; }
table.changes code { white-space: pre-wrap; overflow-wrap: anywhere; }
table:has(tr.activity-entry) { table-layout: fixed; width: 100%; }
table:has(tr.activity-entry) th:last-child { width: 42%; }
tr.activity-entry td { overflow-wrap: anywhere; vertical-align: top; }
table.changes { width: 100%; table-layout: fixed; }
table.changes th:first-child { width: 28%; }
`
