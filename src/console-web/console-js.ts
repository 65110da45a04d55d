// The console's one script, served at /console/assets/console.js: charts drawn from data attributes
// (Chart.js, served locally) and live status by polling a small JSON endpoint. No inline script runs
// (the Content-Security-Policy forbids it); pages work without it, only less live.
export const CONSOLE_JS = `
'use strict'
function drawCharts() {
  if (typeof Chart === 'undefined') return
  document.querySelectorAll('canvas[data-chart]').forEach(function (canvas) {
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
function pollRuns() {
  document.querySelectorAll('[data-poll]').forEach(function (box) {
    var url = box.getAttribute('data-poll')
    var started = Date.now()
    function tick() {
      fetch(url, { headers: { accept: 'application/json' }, credentials: 'same-origin' })
        .then(function (response) {
          // A run gone or a session ended (the answer is the sign-in page): stop watching.
          if (!response.ok || (response.headers.get('content-type') || '').indexOf('application/json') !== 0) throw new Error('stop')
          return response.json()
        })
        .then(function (run) {
          box.querySelector('[data-field=status]').textContent = run.status
          box.querySelector('[data-field=elapsed]').textContent = run.elapsed
          box.querySelector('[data-field=message]').textContent = run.message
          if (run.status === 'success' || run.status === 'failed') {
            box.setAttribute('data-ended', run.status)
            var refresh = box.querySelector('[data-field=refresh]')
            if (refresh) refresh.hidden = false
            return
          }
          if (Date.now() - started < 30 * 60 * 1000) setTimeout(tick, 1000)
        })
        .catch(function (error) { if (error.message !== 'stop' && Date.now() - started < 30 * 60 * 1000) setTimeout(tick, 3000) })
    }
    tick()
  })
}
document.addEventListener('DOMContentLoaded', function () { drawCharts(); pollRuns() })
`
