// The project's Overview tab as drawn: base URL and keys with copy buttons,
// what is on, the next steps, and small charts (assets/overview.js): the whole
// fleet's last 24 hours per hour from the catalogue (usage-recent.json), and
// this node's last hour per minute (metrics.json: status classes, latency and
// queueing, which only the node counts). The tab has no forms.
import type { ProjectRecord } from '../../../../lib/catalogue.ts'
import { allows, type Caller } from '../../../access.ts'
import { MINUTE_MS } from '../../../../lib/metrics/recent-minutes.ts'
import { keysView } from '../../../views.ts'
import { copyable, empty, html, type Safe } from '../../html.ts'
import { projectCall, projectPage, type DashboardContext, type Screen, type ScreenPart } from '../../module.ts'
import { getProject } from '../../../projects.ts'
import { BaseplaneError } from '../../../../lib/errors.ts'
import { DEFAULT_RECENT_HOURS, recentUsage } from '../../../usage-charts.ts'

/** `secrets`: whether the caller may see the service_role key (the operator, a developer or an owner; never a read-only member). */
function apiSection(keys: ReturnType<typeof keysView>, secrets: boolean): Safe {
  return html`<section><h2>API</h2><div class="scroll"><table>
<tr><th scope="row">Base URL</th><td>${copyable('base-url', keys.base_url, 'base URL')}</td></tr>
<tr><th scope="row">anon key</th><td>${copyable('anon-key', keys.anon_key, 'anon key')}</td></tr>
<tr><th scope="row">service_role key</th><td>${
    secrets
      ? html`<details><summary>Show (server-side only: it bypasses row-level security)</summary>${copyable('service-role-key', keys.service_role_key, 'service_role key')}</details>`
      : html`<span class="muted" id="service-role-hidden">Shown to developers and owners</span>`
  }</td></tr>
</table></div>
<p class="muted">From an app: <code>createClient('${keys.base_url}', ANON_KEY)</code> with @supabase/supabase-js.</p></section>`
}

function productsSection(project: ProjectRecord): Safe {
  const ref = project.ref
  const next = [
    !project.authEnabled ? html`<li>Turn Auth on under <a href="/dashboard/projects/${ref}/settings">Settings</a> to sign users in.</li>` : '',
    html`<li>Create tables with <code>baseplane db url ${ref}</code> and psql; the Data API serves them at once (<code>supabase.from('table')</code>, try it under <a href="/dashboard/projects/${ref}/rest">REST</a>) and they appear in <a href="/dashboard/projects/${ref}/graphql">GraphQL</a>.</li>`,
    !project.pushEnabled ? html`<li>Turn Push on under <a href="/dashboard/projects/${ref}/settings">Settings</a> to send notifications.</li>` : '',
  ]
  const state = (id: string, name: string, on: boolean) => html`<span id="product-${id}" class="${on ? 'on' : 'off'}">${name}: ${on ? 'on' : 'off'}</span>`
  return html`<section><h2>Products</h2><p id="products">${state('rest', 'Data API (REST)', true)} · ${state('graphql', 'GraphQL', true)} · ${state('auth', 'Auth', project.authEnabled)} · ${state(
    'push',
    'Push',
    project.pushEnabled,
  )} · plan <strong>${project.plan}</strong></p>
<h3>Next steps</h3><ul id="next-steps">${next}</ul></section>`
}

function fleetSection(ref: string): Safe {
  return html`<section><h2>Last ${DEFAULT_RECENT_HOURS} hours, whole fleet</h2>
<p class="muted">Per hour (UTC), the current hour so far last: what every node counted, as written to the catalogue once a minute. The month against the plan's quotas is under <a href="/dashboard/projects/${ref}/usage">Usage</a>.</p>
<div id="fleet-charts" class="charts" data-samples="/dashboard/projects/${ref}/usage-recent.json?hours=${DEFAULT_RECENT_HOURS}">${empty(
    'No usage in the last 24 hours yet: charts of requests by service (the Data API, GraphQL, Auth, Push), Auth and push deliveries appear here within a minute of the project answering requests.',
  )}</div></section>`
}

function nodeSection(ref: string): Safe {
  return html`<section><h2>Last hour, this node</h2>
<p class="muted">Per minute: status classes, latency and fair-share queueing of the requests this node answered (each node counts its own; every node's are on its <code>/metrics</code>).</p>
<div id="charts" class="charts" data-samples="/dashboard/projects/${ref}/metrics.json">${empty(
    'No figures yet: charts of requests by status, latency and refusals appear here once this node answers the project\'s requests.',
  )}</div></section>`
}

/** The Overview tab of project `ref`. */
export async function overviewScreen(context: DashboardContext, ref: string, caller: Caller): Promise<Screen> {
  const project = await getProject(context.controlPlane, ref)
  const body = html`${apiSection(keysView(project, context.addressing), allows(caller, ref, 'write'))}
${productsSection(project)}
${fleetSection(project.ref)}
${nodeSection(project.ref)}`
  return { title: 'Overview', body, project, tab: 'overview', scripts: ['uPlot.iife.min.js', 'charts.js', 'overview.js'], styles: ['uPlot.min.css'] }
}

/**
 * The last hour per minute (requests by status class, latency p50/p95, refusals
 * and queueing), as the admin API's metrics/recent answers it, from the figures
 * the data plane beside the dashboard counts.
 */
async function recentFigures(context: DashboardContext, ref: string): Promise<[number, unknown]> {
  const project = await getProject(context.controlPlane, ref)
  return [200, { ref: project.ref, minute_ms: MINUTE_MS, minutes: context.recentFigures?.(project.ref) ?? [] }]
}

/** The fleet's last hours per hour, as the admin API's usage/recent answers it; a bad `hours` is refused in its shape. */
async function fleetFigures(context: DashboardContext, ref: string, query: URLSearchParams): Promise<[number, unknown]> {
  try {
    return [200, await recentUsage(context.controlPlane, ref, query.has('hours') ? query.get('hours')! : undefined)]
  } catch (error) {
    if (BaseplaneError.is(error) && error.status === 400) return [400, { code: error.code, message: error.message }]
    throw error
  }
}

export function overviewScreens(context: DashboardContext): ScreenPart {
  return {
    pages: [projectPage('', (ref, { caller }) => overviewScreen(context, ref, caller))],
    calls: [
      projectCall('GET', '/metrics.json', (ref) => recentFigures(context, ref)),
      projectCall('GET', '/usage-recent.json', (ref, input) => fleetFigures(context, ref, input.query)),
    ],
  }
}
