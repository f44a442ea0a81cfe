// The project's Overview tab as drawn: base URL and keys with copy buttons,
// what is on, the next steps, and the last hour's figures as small charts
// (assets/overview.js reads them from metrics.json). The tab has no forms.
import type { ProjectRecord } from '../../../../lib/catalogue.ts'
import { MINUTE_MS } from '../../../../lib/metrics/recent-minutes.ts'
import { keysView } from '../../../views.ts'
import { copyable, empty, html, type Safe } from '../../html.ts'
import { projectCall, projectPage, type DashboardContext, type Screen, type ScreenPart } from '../../module.ts'
import { getProject } from '../../../projects.ts'

function apiSection(keys: ReturnType<typeof keysView>): Safe {
  return html`<section><h2>API</h2><div class="scroll"><table>
<tr><th scope="row">Base URL</th><td>${copyable('base-url', keys.base_url, 'base URL')}</td></tr>
<tr><th scope="row">anon key</th><td>${copyable('anon-key', keys.anon_key, 'anon key')}</td></tr>
<tr><th scope="row">service_role key</th><td><details><summary>Show (server-side only: it bypasses row-level security)</summary>${copyable(
    'service-role-key',
    keys.service_role_key,
    'service_role key',
  )}</details></td></tr>
</table></div>
<p class="muted">From an app: <code>createClient('${keys.base_url}', ANON_KEY)</code> with @supabase/supabase-js.</p></section>`
}

function productsSection(project: ProjectRecord): Safe {
  const ref = project.ref
  const next = [
    !project.authEnabled ? html`<li>Turn Auth on under <a href="/dashboard/projects/${ref}/settings">Settings</a> to sign users in.</li>` : '',
    html`<li>Create tables with <code>baseplane db url ${ref}</code> and psql; they appear in <a href="/dashboard/projects/${ref}/graphql">GraphQL</a>.</li>`,
    !project.pushEnabled ? html`<li>Turn Push on under <a href="/dashboard/projects/${ref}/settings">Settings</a> to send notifications.</li>` : '',
  ]
  return html`<section><h2>Products</h2><p><span class="on">GraphQL: on</span> · <span class="${project.authEnabled ? 'on' : 'off'}">Auth: ${project.authEnabled ? 'on' : 'off'}</span> · <span class="${
    project.pushEnabled ? 'on' : 'off'
  }">Push: ${project.pushEnabled ? 'on' : 'off'}</span> · plan <strong>${project.plan}</strong></p>
<h3>Next steps</h3><ul>${next}</ul></section>`
}

/** The Overview tab of project `ref`. */
export async function overviewScreen(context: DashboardContext, ref: string): Promise<Screen> {
  const project = await getProject(context.controlPlane, ref)
  const body = html`${apiSection(keysView(project, context.addressing))}
${productsSection(project)}
<section><h2>Last hour</h2><div id="charts" class="charts" data-samples="/dashboard/projects/${project.ref}/metrics.json">${empty(
    'No figures yet: charts of requests by status, latency and refusals appear here once the project answers requests.',
  )}</div></section>`
  return { title: 'Overview', body, project, tab: 'overview', scripts: ['uPlot.iife.min.js', 'overview.js'], styles: ['uPlot.min.css'] }
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

export function overviewScreens(context: DashboardContext): ScreenPart {
  return {
    pages: [projectPage('', (ref) => overviewScreen(context, ref))],
    calls: [projectCall('GET', '/metrics.json', (ref) => recentFigures(context, ref))],
  }
}
