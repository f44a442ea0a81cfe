// The project's Push tab as drawn: the three provider cards (Web Push ready
// with its VAPID public key; Apple and Android with a form for their keys, or
// what identifies the stored key, its removal, and a stop with what to do
// about it), the devices with a test notification each, and the delivery log,
// both filtered and paged by the query string. The data comes from
// control-plane/push-admin.ts (shared with the CLI and the admin API); the
// forms are in forms.ts.
import type { ProjectRecord } from '../../../../lib/catalogue.ts'
import { BaseplaneError, platformErrors } from '../../../../lib/errors.ts'
import { deviceQuery, LOG_STATUSES, logQuery, PLATFORMS, pushOverview, type DevicePage, type LogPage, type PushCredentialsView } from '../../../push-admin.ts'
import { NO_STATE, placeOf, type FormState } from '../../form-state.ts'
import { copyable, empty, html, Safe, table } from '../../html.ts'
import { offScreen, projectPage, type DashboardContext, type Screen, type ScreenPart } from '../../module.ts'
import { getProject } from '../../../projects.ts'

const PER_PAGE = 25
/** What the page calls each provider. */
export const NAMES = { apns: 'Apple (APNs)', fcm: 'Android (FCM)', web: 'Web Push' } as const
/** The page's query parameters: the devices' filters, then the log's. */
const DEVICE_PARAMS = ['platform', 'device_user', 'active', 'offset'] as const
const LOG_PARAMS = ['status', 'provider', 'user', 'before'] as const

function when(value: string | null | undefined): string {
  return value ? value.replace('T', ' ').replace(/\.\d+/, '').replace(/Z$/, ' UTC') : ''
}

/** A failed filter: the message and the parameter it concerns. */
interface FilterError {
  message: string
  param: string
}

/**
 * A section's validated filters, or why they were refused (a value typed into
 * the URL) and the parameter the refusal names (`names`: where the section's
 * parameter is called otherwise).
 */
function parsed<T>(parse: () => T, params: readonly string[], names: Record<string, string> = {}): T | FilterError {
  try {
    return parse()
  } catch (error) {
    if (BaseplaneError.is(error) && error.code === 'invalid_argument') return { message: error.message, param: placeOf(error, { fields: [...params], names }) }
    throw error
  }
}

const isError = (value: object): value is FilterError => 'message' in value && 'param' in value

function wholeNumber(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name)
  if (raw === null || raw === '') return undefined
  return /^\d{1,15}$/.test(raw) ? Number(raw) : -1
}

function hidden(query: URLSearchParams, names: readonly string[]): Safe[] {
  return names.flatMap((name) => {
    const value = query.get(name)
    return value ? [html`<input type="hidden" name="${name}" value="${value}">`] : []
  })
}

function select(id: string, name: string, label: string, options: Array<[string, string]>, chosen: string, invalid: boolean): Safe {
  return html`<div><label for="${id}">${label}</label><select id="${id}" name="${name}" ${invalid ? new Safe('aria-invalid="true"') : ''}>${options.map(
    ([value, text]) => html`<option value="${value}" ${value === chosen ? new Safe('selected') : ''}>${text}</option>`,
  )}</select></div>`
}

function stoppedBlock(id: string, entry: { stopped_reason: string | null; stopped_at: string | null; what_to_do: string | null }): Safe {
  if (!entry.stopped_reason) return html`<p class="on" id="${id}-sending">Sending</p>`
  return html`<div class="error" id="${id}-stopped"><p><strong>Sending stopped</strong> since ${when(entry.stopped_at)}: <code>${entry.stopped_reason}</code></p>
<p id="${id}-what-to-do">${entry.what_to_do}</p></div>`
}

function apnsForm(ref: string, state: FormState): Safe {
  const f = 'apns'
  const input = (name: string, label: string, hint: string) => html`<label for="apns-${name}">${label}</label>
<input type="text" id="apns-${name}" name="${name}" value="${state.value(f, name, '')}" autocomplete="off" ${state.attrs(f, name)}>
<p class="muted">${hint}</p>${state.error(f, name)}`
  const environment = state.value(f, 'environment', 'production')
  return html`<form method="post" action="/dashboard/projects/${ref}/push/apns">
${input('topic', 'Bundle id', 'The app\'s bundle id, such as com.example.app (sent as apns-topic).')}
${input('key_id', 'Key id', 'The 10-character id of the key in the Apple developer account.')}
${input('team_id', 'Team id', 'The 10-character team id of the developer account.')}
${select('apns-environment', 'environment', 'Environment', [['production', 'production'], ['sandbox', 'sandbox (development builds)']], environment, false)}${state.error(f, 'environment')}
<label for="apns-file">Signing key file (.p8)</label>
<input type="file" id="apns-file" accept=".p8" data-fill="apns-p8">
<label for="apns-p8">Key file contents</label>
<textarea id="apns-p8" name="p8" spellcheck="false" placeholder="Filled from the chosen file, or paste the text of the .p8 file" ${state.attrs(f, 'p8')}></textarea>
${state.error(f, 'p8')}${state.error(f, '')}
<p><button id="apns-store">Check and store the Apple key</button></p></form>`
}

function fcmForm(ref: string, state: FormState): Safe {
  const f = 'fcm'
  return html`<form method="post" action="/dashboard/projects/${ref}/push/fcm">
<label for="fcm-file">Service-account file (.json)</label>
<input type="file" id="fcm-file" accept=".json,application/json" data-fill="fcm-service-account">
<label for="fcm-service-account">Service-account file contents</label>
<textarea id="fcm-service-account" name="service_account" spellcheck="false" placeholder="Filled from the chosen file, or paste its JSON" ${state.attrs(f, 'service_account')}></textarea>
<p class="muted">From the Firebase console: Project settings, Service accounts, Generate new private key. It must obtain a token from Google before it is stored.</p>
${state.error(f, 'service_account')}${state.error(f, '')}
<p><button id="fcm-store">Check and store the service account</button></p></form>`
}

function removeForm(ref: string, provider: 'apns' | 'fcm', state: FormState): Safe {
  return html`<form method="post" action="/dashboard/projects/${ref}/push/${provider}/remove" data-confirm="Remove the stored ${NAMES[provider]} key? Nothing is sent through it until a new one is stored.">
${state.error(`remove-${provider}`, '')}<p><button class="danger" id="${provider}-remove">Remove the ${NAMES[provider]} key</button></p></form>`
}

function cards(ref: string, creds: PushCredentialsView, state: FormState): Safe {
  const replacing = (form: string) => (state.refusal?.form === form ? new Safe(' open') : '')
  const apns = creds.apns
    ? html`<p class="on" id="apns-state">Key stored</p>
<dl><dt>Bundle id</dt><dd><code id="apns-topic-shown">${creds.apns.topic}</code></dd><dt>Key id</dt><dd><code>${creds.apns.key_id}</code></dd>
<dt>Team id</dt><dd><code>${creds.apns.team_id}</code></dd><dt>Environment</dt><dd>${creds.apns.environment}</dd>
<dt>Stored</dt><dd>${when(creds.apns.created_at)}${creds.apns.updated_at !== creds.apns.created_at ? `, replaced ${when(creds.apns.updated_at)}` : ''}</dd></dl>
${stoppedBlock('apns', creds.apns)}${removeForm(ref, 'apns', state)}
<details${replacing('apns')}><summary>Replace the key</summary>${apnsForm(ref, state)}</details>`
    : html`<p class="off" id="apns-state">No key: Apple devices get nothing until the app's signing key is stored</p>${state.error('remove-apns', '')}${apnsForm(ref, state)}
<p class="muted">Or: <code>baseplane push credentials set ${ref} apns --topic BUNDLE_ID --key-id KEY_ID --team-id TEAM_ID --file AuthKey.p8</code></p>`
  const fcm = creds.fcm
    ? html`<p class="on" id="fcm-state">Service account stored</p>
<dl><dt>Firebase project</dt><dd><code id="fcm-project-shown">${creds.fcm.project_id}</code></dd><dt>Service account</dt><dd><code>${creds.fcm.client_email}</code></dd>
<dt>Key id</dt><dd><code>${creds.fcm.private_key_id ?? ''}</code></dd>
<dt>Stored</dt><dd>${when(creds.fcm.created_at)}${creds.fcm.updated_at !== creds.fcm.created_at ? `, replaced ${when(creds.fcm.updated_at)}` : ''}</dd></dl>
${stoppedBlock('fcm', creds.fcm)}${removeForm(ref, 'fcm', state)}
<details${replacing('fcm')}><summary>Replace the service account</summary>${fcmForm(ref, state)}</details>`
    : html`<p class="off" id="fcm-state">No service account: Android devices get nothing until one is stored</p>${state.error('remove-fcm', '')}${fcmForm(ref, state)}
<p class="muted">Or: <code>baseplane push credentials set ${ref} fcm --file service-account.json</code></p>`
  return html`<section><h2>Providers</h2><div class="cards">
<div class="card" id="push-web"><h3>Web Push</h3><p class="on">Ready</p>
<p>VAPID public key (browsers subscribe with it):</p>${copyable('vapid-public-key', creds.web.public_key, 'VAPID public key')}</div>
<div class="card" id="push-apns"><h3>Apple (APNs)</h3>${apns}</div>
<div class="card" id="push-fcm"><h3>Android (FCM)</h3>${fcm}</div></div></section>`
}

function devicesSection(ref: string, query: URLSearchParams, devices: DevicePage | FilterError, state: FormState): Safe {
  const bad = isError(devices) ? devices.param : ''
  const filters = html`<form method="get" action="/dashboard/projects/${ref}/push" class="row filters" aria-label="Device filters">
${hidden(query, LOG_PARAMS)}
${select('device-platform', 'platform', 'Platform', [['', 'any'], ...PLATFORMS.map((p): [string, string] => [p, NAMES[p]])], query.get('platform') ?? '', bad === 'platform')}
${select('device-active', 'active', 'State', [['', 'any'], ['true', 'active'], ['false', 'deactivated']], query.get('active') ?? '', bad === 'active')}
<div><label for="device-user">User id</label><input type="search" id="device-user" name="device_user" value="${query.get('device_user') ?? ''}" ${bad === 'device_user' ? new Safe('aria-invalid="true"') : ''}></div>
<div><button class="secondary" id="device-filter">Filter devices</button></div></form>`
  if (isError(devices)) {
    return html`<section id="devices"><h2>Devices</h2>${filters}<p class="field-error" role="alert" id="devices-filter-error">${devices.message}</p></section>`
  }
  const filtering = DEVICE_PARAMS.some((name) => name !== 'offset' && query.get(name))
  const rows = devices.devices.map(
    (d) => html`<tr id="device-${d.id}"><td class="line" title="${d.id} (token ${d.token_prefix})"><code>${d.id}</code><br><code class="muted">${d.token_prefix}</code></td><td>${NAMES[d.platform as keyof typeof NAMES] ?? d.platform}</td>
<td class="half" data-label="user" title="${d.user_id ?? ''}"><code>${d.user_id ?? ''}</code></td><td class="lines" title="${d.deactivated_reason ?? ''}">${d.active ? html`<span class="on">active</span>` : html`<span class="off">deactivated</span>${d.deactivated_reason ? html`: ${d.deactivated_reason}` : ''}`}</td>
<td>${when(d.created_at)}</td><td>${
      d.active
        ? html`<form method="post" action="/dashboard/projects/${ref}/push/devices/${d.id}/test"><button class="secondary" aria-label="Send a test notification to device ${d.id}">Send test</button></form>`
        : ''
    }</td></tr>`,
  )
  const offset = Number(query.get('offset') ?? 0) || 0
  const page = (to: number) => {
    const next = new URLSearchParams(query)
    next.set('offset', String(to))
    return `/dashboard/projects/${ref}/push?${next}#devices`
  }
  const pager = html`<p class="row">${offset > 0 ? html`<a href="${page(Math.max(0, offset - PER_PAGE))}" id="devices-previous">Previous devices</a>` : ''}${
    devices.next_offset !== null ? html`<a href="${page(devices.next_offset)}" id="devices-next">More devices</a>` : ''
  }</p>`
  const list =
    rows.length > 0
      ? html`${table(['Device', 'Platform', 'User', 'State', 'Registered', 'Test'], rows, undefined, { stacked: true })}${pager}`
      : filtering || offset > 0
        ? empty('No devices match these filters.')
        : empty(html`No devices yet. Apps register theirs with <code>POST {base_url}/push/v1/devices</code> (a signed-in user's token) or an insert into <code>push.devices</code>.`)
  return html`<section id="devices"><h2>Devices</h2>${filters}${state.error('test', '')}${list}</section>`
}

function logSection(ref: string, query: URLSearchParams, log: LogPage | FilterError): Safe {
  const bad = isError(log) ? log.param : ''
  const filters = html`<form method="get" action="/dashboard/projects/${ref}/push#log" class="row filters" aria-label="Delivery log filters">
${hidden(query, ['platform', 'device_user', 'active', 'offset'])}
${select('log-status', 'status', 'Status', [['', 'any'], ...LOG_STATUSES.map((s): [string, string] => [s, s])], query.get('status') ?? '', bad === 'status')}
${select('log-provider', 'provider', 'Provider', [['', 'any'], ...PLATFORMS.map((p): [string, string] => [p, NAMES[p]])], query.get('provider') ?? '', bad === 'provider')}
<div><label for="log-user">User id</label><input type="search" id="log-user" name="user" value="${query.get('user') ?? ''}" ${bad === 'user' ? new Safe('aria-invalid="true"') : ''}></div>
<div><button class="secondary" id="log-filter">Filter log</button></div></form>`
  if (isError(log)) return html`<section id="log"><h2>Delivery log</h2>${filters}<p class="field-error" role="alert" id="log-filter-error">${log.message}</p></section>`
  const rows = log.entries.map(
    (e) => {
      const reason = `${e.reason ?? ''}${e.http_status !== null && e.status !== 'sent' ? ` (HTTP ${e.http_status})` : ''}`
      return html`<tr><td>${when(e.attempted_at)}</td><td class="status-${e.status}">${e.status}</td><td>${NAMES[e.provider as keyof typeof NAMES] ?? e.provider}</td><td data-label="attempt">${e.attempt}</td>
<td class="rest" title="${e.title ?? ''} (message ${e.message_id})">${e.title ?? ''} <code title="${e.message_id}">${e.message_id.slice(0, 8)}</code></td>
<td class="lines" title="${reason}">${reason}</td><td class="half" data-label="device" title="${e.device_id}"><code>${e.device_id}</code></td><td class="half" data-label="user" title="${e.user_id ?? ''}"><code>${e.user_id ?? ''}</code></td></tr>`
    },
  )
  const link = (before: number | undefined) => {
    const next = new URLSearchParams(query)
    if (before === undefined) next.delete('before')
    else next.set('before', String(before))
    return `/dashboard/projects/${ref}/push?${next}#log`
  }
  const pager = html`<p class="row">${query.get('before') ? html`<a href="${link(undefined)}" id="log-newest">Newest entries</a>` : ''}${
    log.next_before !== null ? html`<a href="${link(log.next_before)}" id="log-older">Older entries</a>` : ''
  }</p>`
  const filtering = LOG_PARAMS.some((name) => query.get(name))
  const list =
    rows.length > 0
      ? html`${table(['Time', 'Status', 'Provider', 'Attempt', 'Message', 'Provider\'s reason', 'Device', 'User'], rows, 'Newest first; one row per attempt.', { stacked: true })}${pager}`
      : filtering
        ? empty('No deliveries match these filters.')
        : empty('No deliveries yet. Send a test notification to a device above, or send with POST {base_url}/push/v1/messages or an insert into push.messages.')
  return html`<section id="log"><h2>Delivery log</h2>${filters}${list}</section>`
}

/** The Push tab of `project`, its devices and log filtered and paged by `query`, with a form's state. */
export async function pushScreen(context: DashboardContext, project: ProjectRecord, query: URLSearchParams, state: FormState): Promise<Screen> {
  const ref = project.ref
  if (!project.pushEnabled) {
    return offScreen(project, 'push', 'Push', html`Push is off. Turn it on under <a href="/dashboard/projects/${ref}/settings">Settings</a> to send Web Push, Apple and Android notifications.`)
  }
  const devices = parsed(
    () => {
      const active = query.get('active')
      if (active && active !== 'true' && active !== 'false') throw platformErrors.invalidArgument('active must be true or false', 'active')
      return deviceQuery({
        platform: query.get('platform') || undefined,
        user: query.get('device_user') || undefined,
        active: active ? active === 'true' : undefined,
        offset: wholeNumber(query, 'offset'),
        limit: PER_PAGE,
      })
    },
    DEVICE_PARAMS,
    { user: 'device_user' },
  )
  const log = parsed(
    () =>
      logQuery({
        status: query.get('status') || undefined,
        provider: query.get('provider') || undefined,
        user: query.get('user') || undefined,
        before: wholeNumber(query, 'before'),
        limit: PER_PAGE,
      }),
    LOG_PARAMS,
  )
  const shown = await pushOverview(context.controlPlane, ref, { devices: isError(devices) ? undefined : devices, log: isError(log) ? undefined : log })
  const body = html`${cards(ref, shown.credentials, state)}${devicesSection(ref, query, isError(devices) ? devices : shown.devices!, state)}${logSection(ref, query, isError(log) ? log : shown.log!)}`
  return { title: 'Push', project, tab: 'push', body, scripts: ['push.js'] }
}

export function pushScreens(context: DashboardContext): ScreenPart {
  return { pages: [projectPage('/push', async (ref, { query }) => pushScreen(context, await getProject(context.controlPlane, ref), query, NO_STATE))] }
}
