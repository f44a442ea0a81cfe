// The project's Overview tab: base URL and keys with copy buttons, what is
// on, the next steps, and the last hour's figures as small charts.
import { MINUTE_MS } from '../../../lib/metrics/recent-minutes.ts'
import { REF_PARAM } from '../../admin-api.ts'
import { keysView } from '../../views.ts'
import { copyable, empty, html } from '../html.ts'
import type { DashboardContext, DashboardModule } from '../module.ts'

export function overviewPage(context: DashboardContext): DashboardModule {
  return {
    tab: { id: 'overview', label: 'Overview' },
    pages: [
      {
        method: 'GET',
        path: '/projects/:ref',
        where: REF_PARAM,
        page: async ({ params }) => {
          const project = await context.controlPlane.get(params.ref!)
          const keys = keysView(project, context.addressing)
          const ref = project.ref
          const next = [
            !project.authEnabled ? html`<li>Turn Auth on under <a href="/dashboard/projects/${ref}/settings">Settings</a> to sign users in.</li>` : '',
            html`<li>Create tables with <code>baseplane db url ${ref}</code> and psql; they appear in <a href="/dashboard/projects/${ref}/graphql">GraphQL</a>.</li>`,
            !project.pushEnabled ? html`<li>Turn Push on under <a href="/dashboard/projects/${ref}/settings">Settings</a> to send notifications.</li>` : '',
          ]
          const body = html`<section><h2>API</h2><div class="scroll"><table>
<tr><th scope="row">Base URL</th><td>${copyable('base-url', keys.base_url, 'base URL')}</td></tr>
<tr><th scope="row">anon key</th><td>${copyable('anon-key', keys.anon_key, 'anon key')}</td></tr>
<tr><th scope="row">service_role key</th><td><details><summary>Show (server-side only: it bypasses row-level security)</summary>${copyable(
            'service-role-key',
            keys.service_role_key,
            'service_role key',
          )}</details></td></tr>
</table></div>
<p class="muted">From an app: <code>createClient('${keys.base_url}', ANON_KEY)</code> with @supabase/supabase-js.</p></section>
<section><h2>Products</h2><p><span class="on">GraphQL: on</span> · <span class="${project.authEnabled ? 'on' : 'off'}">Auth: ${project.authEnabled ? 'on' : 'off'}</span> · <span class="${
            project.pushEnabled ? 'on' : 'off'
          }">Push: ${project.pushEnabled ? 'on' : 'off'}</span> · plan <strong>${project.plan}</strong></p>
<h3>Next steps</h3><ul>${next}</ul></section>
<section><h2>Last hour</h2><div id="charts" class="charts" data-samples="/dashboard/projects/${ref}/metrics.json">${empty(
            'No figures yet: charts of requests by status, latency and refusals appear here once the project answers requests.',
          )}</div></section>`
          return { title: 'Overview', body, project, tab: 'overview', scripts: ['uPlot.iife.min.js', 'overview.js'], styles: ['uPlot.min.css'] }
        },
      },
    ],
    calls: [
      {
        // The last hour per minute (requests by status class, latency p50/p95,
        // refusals and queueing), as the admin API's metrics/recent answers it,
        // from the figures the data plane beside the dashboard counts.
        method: 'GET',
        path: '/projects/:ref/metrics.json',
        where: REF_PARAM,
        call: async ({ params }) => {
          const project = await context.controlPlane.get(params.ref!)
          return [200, { ref: project.ref, minute_ms: MINUTE_MS, minutes: context.recentFigures?.(project.ref) ?? [] }]
        },
      },
    ],
  }
}
