// The project's Realtime tab as drawn: its plan's limits, this node's open
// sockets and the broadcasts it took, the month's messages (usage), and the
// inspector, whose script (assets/realtime.js) joins a channel as the chosen
// caller and lists what arrives. The inspector's token comes from forms.ts.
import type { ProjectRecord } from '../../../../lib/catalogue.ts'
import { REALTIME_LIMITS } from '../../../../lib/plans.ts'
import { html, table, type Safe } from '../../html.ts'
import { projectPage, type DashboardContext, type Screen, type ScreenPart } from '../../module.ts'
import { getProject } from '../../../projects.ts'
import { projectUsage } from '../../../usage.ts'
import { keysView } from '../../../views.ts'

const count = (n: number) => n.toLocaleString('en')
const row = (what: string, value: Safe | string) => html`<tr><th scope="row">${what}</th><td>${value}</td></tr>`

export async function realtimeScreen(context: DashboardContext, project: ProjectRecord): Promise<Screen> {
  const limits = REALTIME_LIMITS[project.plan]
  const here = context.realtimeFigures?.(project.ref) ?? { connections: 0, messages: 0 }
  const usage = await projectUsage(context.controlPlane, project.ref)
  const ref = project.ref
  const body = html`<section aria-labelledby="rt-now"><h2 id="rt-now">Now</h2>
${table(['', 'count'], [
  row('Sockets open on this node', html`<span id="rt-connections">${count(here.connections)}</span>`),
  row('Broadcasts this node took since it started', html`<span id="rt-node-messages">${count(here.messages)}</span>`),
  row(`Messages in ${usage.month} (UTC), every node`, html`<span id="rt-month-messages">${count(usage.totals.realtime_messages ?? 0)}</span>`),
  row(`Peak connections in ${usage.month}, every node`, html`<span id="rt-month-peak">${count(usage.totals.realtime_peak_connections ?? 0)}</span>`),
])}
<p class="muted">Every node's open sockets are on its <code>/metrics</code> (<code>baseplane_realtime_connections</code>).</p>
</section>
<section aria-labelledby="rt-limits"><h2 id="rt-limits">Limits of the ${project.plan} plan</h2>
${table(['limit', 'figure'], [
  row('Concurrent connections', count(limits.connections)),
  row('Messages per second', count(limits.messagesPerSecond)),
  row('Channel joins per second', count(limits.joinsPerSecond)),
  row('Channels per connection', count(limits.channelsPerConnection)),
  row('Presence messages per second', count(limits.presencePerSecond)),
  row('Broadcast payload', `${count(Math.round(limits.payloadBytes / 1024))} KB`),
])}
<p class="muted">Supabase's published Realtime limits; on a fleet each node takes an equal share.</p>
</section>
<section aria-labelledby="rt-inspector"><h2 id="rt-inspector">Inspector</h2>
<p>Joins a channel as the caller chosen, under the project's policies, and lists what arrives: broadcasts, presence, database changes.</p>
<form id="rt-form" data-ref="${ref}">
<label for="rt-topic">Channel</label><input type="text" id="rt-topic" name="topic" value="room" required autocomplete="off">
<label for="rt-role">As</label><select id="rt-role" name="role"><option value="anon">anon (the anon key)</option><option value="user">a user of the project</option><option value="service_role">service_role</option></select>
<div id="rt-user-row" hidden><label for="rt-user">User (email or id)</label><input type="text" id="rt-user" name="user" autocomplete="off"></div>
<label><input type="checkbox" id="rt-private" name="private"> Private channel (config.private)</label>
<label for="rt-table">Postgres changes of table (optional)</label><input type="text" id="rt-table" name="table" placeholder="public.messages" autocomplete="off">
<p id="rt-problem" class="error" role="alert" hidden></p>
<button type="submit" id="rt-join">Join</button> <button type="button" id="rt-leave" disabled>Leave</button>
</form>
<p id="rt-status" aria-live="polite">Not joined</p>
<ol id="rt-log" class="log"></ol>
</section>`
  // The inspector's socket goes to the project's endpoint, which is another origin where projects have hosts of their own.
  const socketOrigin = new URL(keysView(project, context.addressing).base_url).origin.replace(/^http/, 'ws')
  return { title: `${project.name}: Realtime`, body, project, tab: 'realtime', scripts: ['realtime.js'], connect: [socketOrigin] }
}

export function realtimeScreens(context: DashboardContext): ScreenPart {
  return { pages: [projectPage('/realtime', async (ref) => realtimeScreen(context, await getProject(context.controlPlane, ref)))] }
}
