// The console's one script, served at /console/assets/console.js: charts drawn from data attributes
// (Chart.js, served locally) and live status by polling a small JSON endpoint; when a watched run
// ends, the page's live sections (runs, charts, errors, channels, held banners) are fetched again
// and swapped in place; the rule editor shows the fields of each chosen action, and the rules page
// moves a focused rule with Alt+ArrowUp and Alt+ArrowDown. No inline script runs (the Content-Security-Policy forbids it); pages work
// without it, only less live.
export const CONSOLE_JS = `
'use strict'
var WATCH_MS = 30 * 60 * 1000
function drawCharts(root) {
  if (typeof Chart === 'undefined') return
  root.querySelectorAll('canvas[data-chart]').forEach(function (canvas) {
    // A canvas holds one chart: one drawn before is destroyed first.
    var drawn = Chart.getChart(canvas)
    if (drawn) drawn.destroy()
    var spec = JSON.parse(canvas.getAttribute('data-chart'))
    new Chart(canvas, {
      type: spec.type || 'line',
      data: { labels: spec.labels, datasets: spec.datasets },
      options: {
        responsive: true, maintainAspectRatio: false, animation: false,
        plugins: { legend: { display: spec.datasets.length > 1 } },
        scales: { y: { beginAtZero: true, title: { display: !!spec.unit, text: spec.unit || '' } } }
      }
    })
  })
}
function destroyCharts(root) {
  if (typeof Chart === 'undefined') return
  root.querySelectorAll('canvas[data-chart]').forEach(function (canvas) {
    var drawn = Chart.getChart(canvas)
    if (drawn) drawn.destroy()
  })
}
// The page again, as the server renders it now: each [data-live-section] replaced by its new version.
function refreshSections() {
  return fetch(window.location.href, { headers: { accept: 'text/html' }, credentials: 'same-origin' })
    .then(function (response) {
      if (!response.ok || (response.headers.get('content-type') || '').indexOf('text/html') !== 0) throw new Error('stop')
      return response.text()
    })
    .then(function (text) {
      var fresh = new DOMParser().parseFromString(text, 'text/html')
      document.querySelectorAll('[data-live-section]').forEach(function (old) {
        var name = old.getAttribute('data-live-section')
        var next = fresh.querySelector('[data-live-section="' + name + '"]')
        if (!next) return
        destroyCharts(old)
        var adopted = document.importNode(next, true)
        old.replaceWith(adopted)
        drawCharts(adopted)
      })
    })
}
function badgeClass(status) {
  return 'badge badge-' + String(status).toLowerCase().replace(/\\s+/g, '_').replace(/[^a-z_]/g, '')
}
function watch(box) {
  var url = box.getAttribute('data-poll')
  var started = Date.now()
  function ended(run) {
    box.setAttribute('data-ended', run.status)
    // The page was made after the run ended: its sections show it already.
    if (box.hasAttribute('data-shown-ended')) return box.setAttribute('data-refreshed', 'true')
    return refreshSections()
      .then(function () { box.setAttribute('data-refreshed', 'true') })
      .catch(function () {
        // The sections could not be fetched again: the link shows the results.
        var refresh = box.querySelector('[data-field=refresh]')
        if (refresh) refresh.hidden = false
      })
  }
  function tick() {
    fetch(url, { headers: { accept: 'application/json' }, credentials: 'same-origin' })
      .then(function (response) {
        // A run gone or a session ended (the answer is the sign-in page): stop watching.
        if (!response.ok || (response.headers.get('content-type') || '').indexOf('application/json') !== 0) throw new Error('stop')
        return response.json()
      })
      .then(function (run) {
        var status = box.querySelector('[data-field=status]')
        status.textContent = run.status
        status.className = badgeClass(run.status)
        box.querySelector('[data-field=elapsed]').textContent = run.elapsed
        box.querySelector('[data-field=message]').textContent = run.message
        if (run.ended) return ended(run)
        if (Date.now() - started < WATCH_MS) setTimeout(tick, 1000)
      })
      .catch(function (error) { if (error.message !== 'stop' && Date.now() - started < WATCH_MS) setTimeout(tick, 3000) })
  }
  tick()
}
// The rule editor: an action row shows the fields of the action chosen in it (without script, a
// button asks the server for them).
function showActionFields(row) {
  var chosen = row.querySelector('[data-action-select]').value
  row.querySelectorAll('[data-for]').forEach(function (field) {
    field.hidden = field.getAttribute('data-for').split(' ').indexOf(chosen) < 0
  })
}
// The rules page: Alt+ArrowUp and Alt+ArrowDown on a focused rule press its Move button (a form's).
function moveByKeys(event) {
  if (!event.altKey || (event.key !== 'ArrowUp' && event.key !== 'ArrowDown')) return
  var rule = event.target && event.target.closest ? event.target.closest('[data-rule]') : null
  var button = rule ? rule.querySelector('[data-move=' + (event.key === 'ArrowUp' ? 'up' : 'down') + ']') : null
  if (!button) return
  event.preventDefault()
  button.click()
}
// A button that changes what a tenant can do (the operator's Lock, Disable) asks first.
document.addEventListener('submit', function (event) {
  var button = event.submitter
  var question = button && button.getAttribute('data-confirm')
  if (question && !window.confirm(question)) event.preventDefault()
})
document.addEventListener('DOMContentLoaded', function () {
  drawCharts(document)
  document.querySelectorAll('[data-poll]').forEach(watch)
  document.querySelectorAll('[data-action-row]').forEach(function (row) {
    showActionFields(row)
    row.querySelector('[data-action-select]').addEventListener('change', function () { showActionFields(row) })
  })
  document.querySelectorAll('[data-no-js]').forEach(function (element) { element.hidden = true })
  document.addEventListener('keydown', moveByKeys)
})
`
