// The Overview tab's charts, drawn with uPlot (served from the package) in
// cards sized to fit (charts.js), refreshed every minute:
// - #fleet-charts: the whole fleet's last 24 hours per hour, from the
//   catalogue (usage-recent.json): requests by service, Auth's sign-ins,
//   refreshes and mail, push deliveries by provider and outcome;
// - #charts: this node's last hour per minute (metrics.json): requests by
//   status class, latency, refusals and queueing, which only the node counts.
const fleetBox = document.getElementById('fleet-charts')
const nodeBox = document.getElementById('charts')
const charts = window.baseplaneCharts

const NODE_CHARTS = [
  {
    id: 'chart-requests',
    title: 'Requests by status (this node)',
    series: [
      ['2xx', '#1b7f3b', (m) => m.requests['2xx']],
      ['3xx', '#1f56b8', (m) => m.requests['3xx']],
      ['4xx', '#b26a00', (m) => m.requests['4xx']],
      ['5xx', '#b3261e', (m) => m.requests['5xx']],
    ],
  },
  {
    id: 'chart-latency',
    title: 'Latency (ms, this node)',
    series: [
      ['p50', '#1f56b8', (m) => m.latency_ms?.p50 ?? null],
      ['p95', '#b26a00', (m) => m.latency_ms?.p95 ?? null],
    ],
  },
  {
    id: 'chart-refusals',
    title: 'Refused and queued (this node)',
    series: [
      ['refused (503)', '#b3261e', (m) => m.refusals],
      ['queued', '#5b6570', (m) => m.queued],
    ],
  },
]

function drawNode(minutes) {
  const busy = minutes.some((m) => Object.values(m.requests).some((n) => n > 0) || m.refusals > 0)
  if (!busy) return
  charts.clear(nodeBox)
  const times = minutes.map((m) => Date.parse(m.start) / 1000)
  for (const spec of NODE_CHARTS) {
    const series = spec.series.map(([label, stroke, pick]) => ({ label, stroke, values: minutes.map(pick) }))
    charts.chart(nodeBox, { id: spec.id, title: spec.title, series }, times)
  }
}

const PROVIDERS = [
  ['apns', 'APNs', undefined],
  ['fcm', 'FCM', [6, 3]],
  ['web', 'Web Push', [2, 3]],
]
const OUTCOMES = [
  ['sent', '#1b7f3b'],
  ['failed', '#b3261e'],
  ['retry', '#b26a00'],
  ['held', '#5b6570'],
  ['expired', '#6a3fb0'],
]

/** A counter's values over the points. */
const column = (points, counter) => points.map((p) => p.counters[counter] ?? 0)

/** Push deliveries: a series per provider and outcome counted in the window (each provider's sent when none was). */
function pushSeries(points) {
  const series = []
  for (const [provider, name, dash] of PROVIDERS) {
    for (const [outcome, stroke] of OUTCOMES) {
      const values = column(points, `push_${provider}_${outcome}`)
      if (values.some((v) => v > 0)) series.push({ label: `${name} ${outcome}`, stroke, dash, values })
    }
  }
  if (series.length > 0) return series
  return PROVIDERS.map(([provider, name, dash]) => ({ label: `${name} sent`, stroke: '#1b7f3b', dash, values: column(points, `push_${provider}_sent`) }))
}

function drawFleet(points) {
  const busy = points.some((p) => Object.values(p.counters).some((n) => n > 0))
  if (!busy) return
  charts.clear(fleetBox)
  const times = points.map((p) => Date.parse(p.start) / 1000)
  const requests = [
    ['Data API (REST)', '#6a3fb0', 'requests_rest'],
    ['Auth', '#1f56b8', 'requests_auth'],
    ['GraphQL', '#1b7f3b', 'requests_graphql'],
    ['Push', '#b26a00', 'requests_push'],
    ['Other', '#5b6570', 'requests_other'],
  ]
  const auth = [
    ['sign-ins', '#1f56b8', 'auth_sign_ins'],
    ['token refreshes', '#1b7f3b', 'auth_token_refreshes'],
    ['mail sent', '#b26a00', 'mail_sent'],
  ]
  const of = (list) => list.map(([label, stroke, counter]) => ({ label, stroke, values: column(points, counter) }))
  charts.chart(fleetBox, { id: 'chart-fleet-requests', title: 'Requests by service (whole fleet, per hour)', series: of(requests) }, times, { utc: true })
  charts.chart(fleetBox, { id: 'chart-fleet-auth', title: 'Auth (whole fleet, per hour)', series: of(auth) }, times, { utc: true })
  charts.chart(fleetBox, { id: 'chart-push', title: 'Push deliveries (whole fleet, per hour)', series: pushSeries(points) }, times, { utc: true })
}

async function fetchJson(url) {
  const response = await fetch(url, { credentials: 'same-origin' })
  return response.ok ? response.json() : undefined
}

async function load() {
  // Each box on its own: one that fails is tried again at the next refresh.
  await Promise.all([
    fleetBox && fetchJson(fleetBox.dataset.samples).then((answer) => answer && drawFleet(answer.points ?? []), () => {}),
    nodeBox && fetchJson(nodeBox.dataset.samples).then((answer) => answer && drawNode(answer.minutes ?? []), () => {}),
  ])
}

if (charts && window.uPlot) {
  load()
  setInterval(load, 60_000)
}
