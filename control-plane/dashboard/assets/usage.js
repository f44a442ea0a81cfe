// The Usage tab's charts per day of the billing month (usage.json, the fleet's
// figures from the catalogue), drawn with uPlot in cards sized to fit
// (charts.js): requests by service, Auth, push deliveries, database size.
const box = document.getElementById('usage-charts')
const charts = window.baseplaneCharts

const sum = (counters, names) => names.reduce((n, name) => n + (counters[name] ?? 0), 0)
const PROVIDERS = ['apns', 'fcm', 'web']
const MB = 1024 * 1024

function draw(days) {
  if (days.length === 0) return
  charts.clear(box)
  const times = days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000)
  const counter = (name) => days.map((d) => d.counters[name] ?? 0)
  const pushOutcome = (outcome) => days.map((d) => sum(d.counters, PROVIDERS.map((p) => `push_${p}_${outcome}`)))
  const specs = [
    {
      id: 'chart-days-requests',
      title: 'Requests per day',
      series: [
        { label: 'Data API (REST)', stroke: '#6a3fb0', values: counter('requests_rest') },
        { label: 'Auth', stroke: '#1f56b8', values: counter('requests_auth') },
        { label: 'GraphQL', stroke: '#1b7f3b', values: counter('requests_graphql') },
        { label: 'Push', stroke: '#b26a00', values: counter('requests_push') },
        { label: 'Other', stroke: '#5b6570', values: counter('requests_other') },
      ],
    },
    {
      id: 'chart-days-auth',
      title: 'Auth per day',
      series: [
        { label: 'sign-ins', stroke: '#1f56b8', values: counter('auth_sign_ins') },
        { label: 'token refreshes', stroke: '#1b7f3b', values: counter('auth_token_refreshes') },
        { label: 'mail sent', stroke: '#b26a00', values: counter('mail_sent') },
      ],
    },
    {
      id: 'chart-days-push',
      title: 'Push deliveries per day',
      series: [
        { label: 'sent', stroke: '#1b7f3b', values: pushOutcome('sent') },
        { label: 'failed', stroke: '#b3261e', values: pushOutcome('failed') },
        { label: 'expired', stroke: '#6a3fb0', values: pushOutcome('expired') },
      ],
    },
    {
      id: 'chart-days-size',
      title: 'Database size per day (MB, largest sample)',
      series: [{ label: 'MB', stroke: '#1f56b8', values: days.map((d) => (d.database_size_bytes === null ? null : Math.round((d.database_size_bytes / MB) * 10) / 10)) }],
    },
  ]
  // The size chart only once a size has been sampled (hourly by default).
  const sampled = days.some((d) => d.database_size_bytes !== null)
  for (const spec of sampled ? specs : specs.slice(0, -1)) charts.chart(box, spec, times, { utc: true })
}

async function load() {
  try {
    const response = await fetch(box.dataset.samples, { credentials: 'same-origin' })
    if (response.ok) draw((await response.json()).days ?? [])
  } catch {
    // The table under the charts has the same figures.
  }
}

if (box && charts && window.uPlot) load()
