// The Overview tab's charts: the last hour of the project's figures per
// minute (requests by status class, latency, refusals and queueing), drawn
// with uPlot (served from the package). Refreshed every minute.
const box = document.getElementById('charts')

const CHARTS = [
  {
    id: 'chart-requests',
    title: 'Requests by status',
    series: [
      ['2xx', '#1b7f3b', (m) => m.requests['2xx']],
      ['3xx', '#1f56b8', (m) => m.requests['3xx']],
      ['4xx', '#b26a00', (m) => m.requests['4xx']],
      ['5xx', '#b3261e', (m) => m.requests['5xx']],
    ],
  },
  {
    id: 'chart-latency',
    title: 'Latency (ms)',
    series: [
      ['p50', '#1f56b8', (m) => m.latency_ms?.p50 ?? null],
      ['p95', '#b26a00', (m) => m.latency_ms?.p95 ?? null],
    ],
  },
  {
    id: 'chart-refusals',
    title: 'Refused and queued',
    series: [
      ['refused (503)', '#b3261e', (m) => m.refusals],
      ['queued', '#5b6570', (m) => m.queued],
    ],
  },
]

function draw(minutes) {
  const busy = minutes.some((m) => Object.values(m.requests).some((n) => n > 0) || m.refusals > 0)
  if (!busy) return
  box.replaceChildren()
  const times = minutes.map((m) => Date.parse(m.start) / 1000)
  const width = Math.max(240, Math.min(520, box.clientWidth - 24))
  for (const chart of CHARTS) {
    const figure = document.createElement('figure')
    figure.className = 'card chart'
    figure.id = chart.id
    figure.style.margin = '0'
    const caption = document.createElement('figcaption')
    caption.textContent = chart.title
    figure.append(caption)
    box.append(figure)
    const data = [times, ...chart.series.map(([, , pick]) => minutes.map(pick))]
    const options = {
      width,
      height: 160,
      series: [{}, ...chart.series.map(([label, stroke]) => ({ label, stroke, width: 1.5, spanGaps: false }))],
      axes: [{}, { size: 40 }],
    }
    // uPlot is the global the iife build defines.
    new window.uPlot(options, data, figure)
  }
}

async function load() {
  try {
    const response = await fetch(box.dataset.samples, { credentials: 'same-origin' })
    if (response.ok) draw((await response.json()).minutes ?? [])
  } catch {
    // The next refresh tries again.
  }
}

if (box && window.uPlot) {
  load()
  setInterval(load, 60_000)
}
