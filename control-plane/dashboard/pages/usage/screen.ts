// The project's Usage tab as drawn (issue 27 item 2): a billing month's usage
// (UTC calendar month, the current one unless `?month=YYYY-MM` says) against
// the quotas of the project's plan and its own overrides, the month's totals,
// and charts per day (assets/usage.js reads them from usage.json). The
// figures are the fleet's, from the catalogue (control-plane/usage.ts
// projectUsage). The tab has no forms: the month is chosen by a GET.
import type { ProjectRecord } from '../../../../lib/catalogue.ts'
import { BaseplaneError } from '../../../../lib/errors.ts'
import { PUSH_OUTCOMES, PUSH_PROVIDERS } from '../../../../lib/metrics/usage-counters.ts'
import { SERVICES } from '../../../../lib/metrics/project-figures.ts'
import { isSizeQuota, QUOTA_LABELS, QUOTA_NAMES, quotaFigureText, type QuotaName, type Quotas } from '../../../../lib/plans.ts'
import { projectQuotas } from '../../../quotas.ts'
import { getProject } from '../../../projects.ts'
import { projectUsage, usageMonth, type ProjectUsageView } from '../../../usage.ts'
import type { ControlPlane } from '../../../control-plane.ts'
import { empty, html, table, type Safe } from '../../html.ts'
import { projectCall, projectPage, type DashboardContext, type Screen, type ScreenPart } from '../../module.ts'

/** What the page shows of the quotas: the figures in force, whether they are the project's own, and the month's use. */
interface MonthQuotas extends Quotas {
  own: boolean
  readOnly: boolean
  used: Record<QuotaName, number | null>
}

/**
 * The project's quotas (its plan's with the operator's overrides, quotas.ts
 * projectQuotas) and what `usage`'s month used of them: the current month as
 * the quotas themselves count it; a past month counted the same way from its
 * usage (quotaUse).
 */
async function quotasOf(controlPlane: ControlPlane, ref: string, usage: ProjectUsageView): Promise<MonthQuotas> {
  const view = await projectQuotas(controlPlane, ref)
  const own = Object.keys(view.overrides.figures ?? {}).length > 0 || view.overrides.policy !== undefined
  return { policy: view.policy, figures: view.figures, own, readOnly: view.read_only, used: view.month === usage.month ? view.used : quotaUse(usage) }
}

/**
 * What a month used of each quota, counted as control-plane/db/quotas.ts
 * counts it: active users (anonymous ones included), push deliveries sent
 * (every provider), the platform's Auth mail, the month's latest database
 * size sample (null before the first).
 */
function quotaUse(usage: ProjectUsageView): Record<QuotaName, number | null> {
  return {
    monthly_active_users: usage.active_users.total,
    push_deliveries: PUSH_PROVIDERS.reduce((sum, provider) => sum + (usage.totals[`push_${provider}_sent`] ?? 0), 0),
    mail_sent: usage.totals.mail_sent ?? 0,
    database_size_bytes: usage.database_size.bytes,
    // Storage's size is today's, not kept per month.
    storage_size_bytes: null,
    storage_egress_bytes: usage.totals.bytes_out_storage ?? 0,
  }
}

const SERVICE_NAMES: Record<string, string> = { auth: 'Auth', graphql: 'GraphQL', push: 'Push', rest: 'Data API (REST)', storage: 'Storage', other: 'Other (health, unknown paths)' }
const PROVIDER_NAMES: Record<string, string> = { apns: 'APNs', fcm: 'FCM', web: 'Web Push' }

/** 24117248 → "23.0 MB" (1024-based, as the quotas' figures are written). */
export function bytesText(bytes: number): string {
  const units: Array<[number, string]> = [
    [1024 ** 3, 'GB'],
    [1024 ** 2, 'MB'],
    [1024, 'KB'],
  ]
  for (const [size, unit] of units) if (bytes >= size) return `${(bytes / size).toFixed(1)} ${unit}`
  return `${bytes} bytes`
}

function count(value: number): string {
  return value.toLocaleString('en-US')
}

/** A figure's cell: the number as read (`data-value`, for scripts and tests) and as written. */
function figure(value: number | null, text: string, attribute: Safe = html``): Safe {
  return html`<td ${attribute} data-value="${value === null ? '' : String(value)}">${text}</td>`
}

function monthShift(month: string, by: number): string {
  const [year, m] = month.split('-').map(Number) as [number, number]
  return new Date(Date.UTC(year, m - 1 + by, 1)).toISOString().slice(0, 7)
}

function monthSection(ref: string, month: string, error?: string): Safe {
  const invalid = error === undefined ? '' : html`aria-invalid="true" aria-describedby="month-error"`
  return html`<section><h2>Usage in <span id="usage-month">${month}</span></h2>
<form method="get" action="/dashboard/projects/${ref}/usage"><label for="month">Billing month (UTC calendar month)</label>
${error === undefined ? '' : html`<p class="field-error" role="alert" id="month-error">${error}</p>`}<div class="row"><input type="month" id="month" name="month" value="${month}" ${invalid} required>
<button class="secondary">Show</button>${
    error === undefined
      ? html` <a id="month-previous" href="/dashboard/projects/${ref}/usage?month=${monthShift(month, -1)}">← ${monthShift(month, -1)}</a> <a id="month-next" href="/dashboard/projects/${ref}/usage?month=${monthShift(
          month,
          1,
        )}">${monthShift(month, 1)} →</a>`
      : ''
  }</div></form>
<p class="muted">The whole fleet's figures: every node writes what it counted once a minute, so the month is complete to the last minute or so.</p></section>`
}

function quotaRow(name: QuotaName, used: number | null, quota: number | null): Safe {
  const usedText = used === null ? 'not sampled yet' : isSizeQuota(name) ? bytesText(used) : count(used)
  const share = used === null || quota === null ? null : quota === 0 ? 1 : used / quota
  const shareCell =
    share === null
      ? html`<td class="share" data-value=""><span class="muted">${quota === null ? 'no quota' : ''}</span></td>`
      : html`<td class="share" data-value="${share.toFixed(4)}"><meter min="0" max="1" low="0.8" high="0.999" optimum="0" value="${Math.min(1, share).toFixed(4)}" aria-label="${QUOTA_LABELS[name]}: ${(share * 100).toFixed(1)}% of the quota"></meter> ${(share * 100).toFixed(1)}%</td>`
  const label = QUOTA_LABELS[name]
  return html`<tr id="quota-${name}"><th scope="row">${label[0]!.toUpperCase()}${label.slice(1)}</th>${figure(used, usedText, html`class="used"`)}${figure(
    quota,
    quota === null ? 'none' : quotaFigureText(name, quota),
    html`class="figure"`,
  )}${shareCell}</tr>`
}

function quotasSection(project: ProjectRecord, usage: ProjectUsageView, quotas: MonthQuotas): Safe {
  const { used, own } = quotas
  const policy =
    quotas.policy === 'cap'
      ? html`past a quota, what would go past it is <strong>refused</strong> (<code>cap</code>) until the next month, or the database is made read-only past its size`
      : html`past a quota, use is counted and <strong>billed</strong>, never refused (<code>bill</code>)`
  return html`<section><h2>Quotas</h2>
<p id="quota-policy">Plan <strong>${project.plan}</strong>${own ? ' with this project\'s own overrides' : ''}: ${policy}.</p>${
    quotas.readOnly
      ? html`<p class="error" id="read-only">Read-only: the database reached its size quota, so writes of the API roles and the owner are refused until a sample is under it again (reads still answer).</p>`
      : ''
  }
${table(
  ['Quota', 'Used in the month', 'Quota', 'Share'],
  QUOTA_NAMES.map((name) => quotaRow(name, used[name], quotas.figures[name])),
)}
<p class="muted">Active users signed in or refreshed a token in the month (${count(usage.active_users.anonymous)} of them anonymous); push deliveries are those sent to APNs, FCM or a Web Push endpoint; the database size is the latest sample (taken hourly by default).</p></section>`
}

function totalsSection(usage: ProjectUsageView): Safe {
  const t = usage.totals
  const cell = (counter: string, bytes = false) => figure(t[counter] ?? 0, bytes ? bytesText(t[counter] ?? 0) : count(t[counter] ?? 0), html`data-counter="${counter}"`)
  const requests = SERVICES.map((service) => html`<tr><th scope="row">${SERVICE_NAMES[service] ?? service}</th>${cell(`requests_${service}`)}${cell(`bytes_out_${service}`, true)}</tr>`)
  const push = PUSH_PROVIDERS.map(
    (provider) => html`<tr><th scope="row">${PROVIDER_NAMES[provider]}</th>${PUSH_OUTCOMES.map((outcome) => cell(`push_${provider}_${outcome}`))}</tr>`,
  )
  return html`<section><h2>Totals in ${usage.month}</h2>
<div class="cards"><div class="card"><h3>Requests</h3>${table(['Service', 'Requests', 'Bytes out'], requests)}</div>
<div class="card"><h3>Auth</h3>${table(
    ['', 'Count'],
    [
      html`<tr><th scope="row">Active users</th>${figure(usage.active_users.total, count(usage.active_users.total), html`id="active-users"`)}</tr>`,
      html`<tr><th scope="row">of them anonymous</th>${figure(usage.active_users.anonymous, count(usage.active_users.anonymous), html`id="anonymous-users"`)}</tr>`,
      html`<tr><th scope="row">Sign-ins</th>${cell('auth_sign_ins')}</tr>`,
      html`<tr><th scope="row">Token refreshes</th>${cell('auth_token_refreshes')}</tr>`,
      html`<tr><th scope="row">Mail sent</th>${cell('mail_sent')}</tr>`,
    ],
  )}</div></div>
<h3>Push deliveries</h3>${table(['Provider', ...PUSH_OUTCOMES], push)}</section>`
}

function daysSection(ref: string, usage: ProjectUsageView): Safe {
  const sum = (counters: Record<string, number>, prefix: string) => Object.entries(counters).reduce((n, [name, value]) => (name.startsWith(prefix) ? n + value : n), 0)
  const rows = usage.days.map(
    (day) => html`<tr><td>${day.date}</td><td>${count(sum(day.counters, 'requests_'))}</td><td>${bytesText(sum(day.counters, 'bytes_out_'))}</td><td>${count(
      day.counters.auth_sign_ins ?? 0,
    )}</td><td>${count(day.counters.mail_sent ?? 0)}</td><td>${count(PUSH_PROVIDERS.reduce((n, p) => n + (day.counters[`push_${p}_sent`] ?? 0), 0))}</td><td>${
      day.database_size_bytes === null ? '' : bytesText(day.database_size_bytes)
    }</td></tr>`,
  )
  return html`<section><h2>Per day</h2>
<div id="usage-charts" class="charts" data-samples="/dashboard/projects/${ref}/usage.json?month=${usage.month}">${empty(
    usage.days.length === 0 ? 'This month has not begun.' : 'The charts need their script; the table below has the same figures.',
  )}</div>
<details><summary>Per day as a table</summary>${table(['Day (UTC)', 'Requests', 'Bytes out', 'Sign-ins', 'Mail sent', 'Push sent', 'Database size'], rows)}</details></section>`
}

/** The Usage tab of project `ref` for `?month=` (the current month when absent). */
export async function usageScreen(context: DashboardContext, ref: string, query: URLSearchParams): Promise<Screen> {
  const project = await getProject(context.controlPlane, ref)
  const raw = query.has('month') ? query.get('month')! : undefined
  let month: string
  try {
    month = usageMonth(raw).month
  } catch (error) {
    if (!BaseplaneError.is(error) || error.status !== 400) throw error
    // A month that is not one: the selector again, the error beside it, nothing read.
    const body = monthSection(project.ref, usageMonth(undefined).month, error.message)
    return { title: 'Usage', body, project, tab: 'usage', status: 400 }
  }
  const usage = await projectUsage(context.controlPlane, project.ref, month)
  const quotas = await quotasOf(context.controlPlane, project.ref, usage)
  const body = html`${monthSection(project.ref, month)}
${quotasSection(project, usage, quotas)}
${totalsSection(usage)}
${daysSection(project.ref, usage)}`
  return { title: 'Usage', body, project, tab: 'usage', scripts: ['uPlot.iife.min.js', 'charts.js', 'usage.js'], styles: ['uPlot.min.css'] }
}

/** The month's usage as the admin API answers it, for the charts per day; a bad month is refused in the admin API's shape. */
async function usageFigures(context: DashboardContext, ref: string, query: URLSearchParams): Promise<[number, unknown]> {
  try {
    return [200, await projectUsage(context.controlPlane, ref, query.has('month') ? query.get('month')! : undefined)]
  } catch (error) {
    if (BaseplaneError.is(error) && error.status === 400) return [400, { code: error.code, message: error.message }]
    throw error
  }
}

export function usageScreens(context: DashboardContext): ScreenPart {
  return {
    pages: [projectPage('/usage', (ref, input) => usageScreen(context, ref, input.query))],
    calls: [projectCall('GET', '/usage.json', (ref, input) => usageFigures(context, ref, input.query))],
  }
}
