// The project's REST tab as drawn: a request on the project's data API
// (`{base_url}/rest/v1`): method, the path below /rest/v1 with its query
// string, the Prefer choices, a JSON body for writes, the role to run as
// (anon, a chosen user, service_role), and the answer (status, Content-Range,
// the body, or PostgREST's error by its parts); then the tables, views and
// functions to pick from, read by the platform from the database's catalogue
// (rest-schema.ts), which the page's script (assets/rest.js) reads as
// schema.json; and the exposed schemas, the max rows and the pre-request
// function, how transactions end and whether plans are answered, which the
// operator may change. The request itself is forms.ts's
// call, the settings' forms its forms.
import { restSchema } from '../../../rest-schema.ts'
import { getProject } from '../../../projects.ts'
import { currentPreRequestProblem } from '../../../rest-settings.ts'
import { keysView } from '../../../views.ts'
import { NO_STATE, type FormState } from '../../form-state.ts'
import { html, type Safe } from '../../html.ts'
import { projectCall, projectPage, runAsChoice, type DashboardContext, type Screen, type ScreenPart } from '../../module.ts'
import type { ProjectRecord } from '../../../../lib/catalogue.ts'
import { TX_END_MEANINGS, TX_END_VALUES } from '../../../../lib/rest-tx-end.ts'

/** The methods the tab sends (HEAD and PUT are the endpoint's too, but the form offers what apps mostly send). */
export const METHODS = ['GET', 'POST', 'PATCH', 'DELETE'] as const

/** The Prefer header's choices the form offers, sent joined by commas. */
export const PREFER_CHOICES = ['return=representation', 'count=exact'] as const

/** Asked (by the page, and by the call when the page did not say yes) before a write runs as service_role. */
export const WRITE_CONFIRMATION =
  'Send this write as service_role? service_role bypasses row-level security: it changes every row the request names, whatever the policies say.'

/** The schema to send the request for (Accept-Profile / Content-Profile), when the project exposes several. */
function profileChoice(project: ProjectRecord): Safe | string {
  if (project.restSchemas.length < 2) return ''
  return html`<label for="rest-profile">Schema (sent as Accept-Profile or Content-Profile)</label>
<select id="rest-profile" name="profile">${project.restSchemas.map((schema) => html`<option value="${schema}">${schema}</option>`)}</select>`
}

function requestForm(project: ProjectRecord, baseUrl: string): Safe {
  const ref = project.ref
  return html`<section><h2>Request</h2>
<p>Sent to <code id="rest-endpoint">${baseUrl}/rest/v1</code> through the project's endpoint, as an app's request arrives: the role's row-level security and grants, the project's quotas and fair share apply, and it counts in the project's usage.</p>
<form id="rest" data-run="/dashboard/projects/${ref}/rest/run" data-schema="/dashboard/projects/${ref}/rest/schema.json" data-confirm-write="${WRITE_CONFIRMATION}">
<div class="explorer"><div>
<div style="display:grid;grid-template-columns:minmax(5.5rem,7rem) minmax(0,1fr);gap:.5rem">
<div><label for="rest-method">Method</label><select id="rest-method" name="method">${METHODS.map((m) => html`<option value="${m}">${m}</option>`)}</select></div>
<div><label for="rest-path">Path below /rest/v1</label><input type="text" id="rest-path" name="path" list="rest-paths" placeholder="notes?select=*&amp;limit=10" autocomplete="off" spellcheck="false" aria-describedby="rest-path-help"></div>
</div>
<datalist id="rest-paths"></datalist>
${profileChoice(project)}
<p id="rest-path-help" class="muted">A table or view with PostgREST's query string (<code>notes?select=id,body&amp;done=eq.false&amp;order=id.desc</code>), or a function (<code>rpc/add</code>; GET takes its arguments in the query string).</p>
<fieldset><legend>Prefer</legend>
<label class="check"><input type="checkbox" id="rest-prefer-return" name="prefer" value="return=representation"> return=representation: a write answers the rows it wrote</label>
<label class="check"><input type="checkbox" id="rest-prefer-count" name="prefer" value="count=exact"> count=exact: the total in Content-Range</label></fieldset>
<div id="rest-body-row" hidden><label for="rest-body">Body (JSON: an object, or an array of them to insert several rows)</label><textarea id="rest-body" name="body" rows="6" spellcheck="false">{}</textarea></div>
${runAsChoice('rest', project)}
<p id="rest-problem" class="field-error" role="alert" style="overflow-wrap:anywhere" hidden></p>
<p><button id="rest-run">Send</button> <span id="rest-status" class="muted" aria-live="polite"></span></p>
</div><div>
<h3 id="rest-answer-label" style="margin:.5rem 0 .2rem">Answer</h3>
<p id="rest-meta" aria-live="polite" style="margin-bottom:.2rem;overflow-wrap:anywhere">Send a request to see the answer.</p>
<p style="margin-top:0"><code id="rest-sent" class="muted"></code></p>
<div id="rest-error" hidden><dl style="display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.2rem .75rem;margin:.25rem 0 .75rem;overflow-wrap:anywhere">
<dt>code</dt><dd id="rest-error-code" style="margin:0"></dd><dt>message</dt><dd id="rest-error-message" style="margin:0"></dd>
<dt>details</dt><dd id="rest-error-details" style="margin:0"></dd><dt>hint</dt><dd id="rest-error-hint" style="margin:0"></dd></dl></div>
<pre id="rest-answer" tabindex="0" aria-labelledby="rest-answer-label"></pre>
</div></div></form></section>`
}

const schemaSection = html`<section><h2>Tables and functions</h2>
<p id="rest-schema-note" class="muted" aria-live="polite"></p>
<h3>Tables and views</h3><p class="muted">Pick one to read its first rows.</p><ul id="rest-relations" class="types" aria-label="Tables and views" aria-busy="true"></ul>
<h3>Functions</h3><p class="muted">Pick one to call it with its arguments.</p><ul id="rest-functions" class="types" aria-label="Functions"></ul></section>`

/** The exposed schemas (PostgREST's db-schemas): the list, the default first, to change. */
function exposedSection(project: ProjectRecord, state: FormState): Safe {
  const ref = project.ref
  return html`<section><h2>Exposed schemas</h2>
<p>The schemas the data API serves, the first the default; another is asked for with <code>Accept-Profile</code> / <code>Content-Profile</code> (<code>supabase.schema('api')</code>). The API roles need <code>usage</code> on each schema and privileges on its tables; a schema not created yet serves nothing until it is.</p>
<form method="post" action="/dashboard/projects/${ref}/rest/schemas">
<label for="rest-schemas">Schemas, separated by commas</label>
<input type="text" id="rest-schemas" name="schemas" autocomplete="off" spellcheck="false" value="${state.value('rest_schemas', 'schemas', project.restSchemas.join(', '))}" ${state.attrs('rest_schemas', 'schemas')}>
${state.error('rest_schemas', 'schemas')}
<p><button class="secondary" id="rest-schemas-save">Save schemas</button></p></form></section>`
}

/** The form of the settings each request is served with (forms.ts saves them together). */
export const REQUESTS_FORM = 'rest_requests'

/**
 * The max rows (PostgREST's db-max-rows), the project's own or empty for the
 * node's default, and the pre-request function (its db-pre-request), empty
 * for none: one form, as both apply to every request.
 */
function requestsSection(project: ProjectRecord, state: FormState, problem: string | null): Safe {
  const ref = project.ref
  const maxRows = project.restMaxRows === null ? '' : String(project.restMaxRows)
  const preRequest = project.restPreRequest ?? ''
  // Dropped or revoked since it was named: every request fails until it can be called.
  const broken =
    problem === null
      ? ''
      : html`<p class="field-error" role="alert" id="rest-pre-request-problem">The pre-request function <code>${preRequest}</code> cannot be called: ${problem}. Every request of the project fails until it can, or until it is emptied here.</p>`
  return html`<section><h2>Max rows and pre-request function</h2>${broken}
<p>The most rows one response carries, for reads and set-returning functions (<code>count=exact</code> still counts them all). Empty: the node's default (<code>BASEPLANE_REST_MAX_ROWS</code>, 1,000 unless set).</p>
<p>The pre-request function is called as the caller before every request's statement, with no arguments: it may read the request (<code>current_setting('request.headers', true)</code>) and refuse it by raising an error. It must exist when it is named, and the API roles need <code>usage</code> on its schema and <code>execute</code> on it: every request fails while it cannot be called. Empty: none.</p>
<form method="post" action="/dashboard/projects/${ref}/rest/requests">
<label for="rest-max-rows">Max rows per response (1 to 1,000,000)</label>
<input type="text" inputmode="numeric" id="rest-max-rows" name="max_rows" autocomplete="off" placeholder="default" value="${state.value(REQUESTS_FORM, 'max_rows', maxRows)}" ${state.attrs(REQUESTS_FORM, 'max_rows')}>
${state.error(REQUESTS_FORM, 'max_rows')}
<label for="rest-pre-request">Pre-request function (schema.function or function)</label>
<input type="text" id="rest-pre-request" name="pre_request" autocomplete="off" spellcheck="false" placeholder="none" value="${state.value(REQUESTS_FORM, 'pre_request', preRequest)}" ${state.attrs(REQUESTS_FORM, 'pre_request')}>
${state.error(REQUESTS_FORM, 'pre_request')}
<p><button class="secondary" id="rest-requests-save">Save max rows and pre-request function</button></p></form></section>`
}

/** The form of how transactions end and whether plans are answered (forms.ts saves them together). */
export const TX_PLANS_FORM = 'rest_tx_plans'

/** PostgREST's db-tx-end and db-plan-enabled: one form, as both say what a request may ask of its transaction. */
function txPlansSection(project: ProjectRecord, state: FormState): Safe {
  const ref = project.ref
  const txEnd = state.value(TX_PLANS_FORM, 'tx_end', project.restTxEnd)
  const plans = state.value(TX_PLANS_FORM, 'plans', String(project.restPlans))
  return html`<section><h2>Transactions and plans</h2>
<p>How each request's transaction ends. With an override allowed, a request may ask for the other end with <code>Prefer: tx=rollback</code> (supabase-js <code>.rollback()</code>) or <code>tx=commit</code>: it is answered as usual, then rolled back, and <code>Preference-Applied</code> says so.</p>
<p>Plans: <code>Accept: application/vnd.pgrst.plan+json</code> (supabase-js <code>.explain()</code>) answers the statement's <code>EXPLAIN</code>, run as the caller under its policies and always rolled back. Off by default: a plan shows the project's tables, indexes and policies' conditions to whoever may call the API.</p>
<form method="post" action="/dashboard/projects/${ref}/rest/transactions">
<label for="rest-tx-end">Transaction end</label>
<select id="rest-tx-end" name="tx_end" ${state.attrs(TX_PLANS_FORM, 'tx_end')}>${TX_END_VALUES.map((value) => html`<option value="${value}" ${value === txEnd ? 'selected' : ''}>${value}: ${TX_END_MEANINGS[value]}</option>`)}</select>
${state.error(TX_PLANS_FORM, 'tx_end')}
<label for="rest-plans">Plans</label>
<select id="rest-plans" name="plans" ${state.attrs(TX_PLANS_FORM, 'plans')}><option value="false" ${plans === 'false' ? 'selected' : ''}>off: a plan is refused (406)</option><option value="true" ${plans === 'true' ? 'selected' : ''}>on: a plan is answered</option></select>
${state.error(TX_PLANS_FORM, 'plans')}
<p><button class="secondary" id="rest-tx-plans-save">Save transactions and plans</button></p></form></section>`
}

/** The REST tab of project `ref`, with a form's state. */
export async function restScreen(context: DashboardContext, ref: string, state: FormState = NO_STATE): Promise<Screen> {
  const project = await getProject(context.controlPlane, ref)
  const keys = keysView(project, context.addressing)
  return { title: 'REST', body: html`${requestForm(project, keys.base_url)}${schemaSection}${exposedSection(project, state)}${requestsSection(project, state, await currentPreRequestProblem(context.controlPlane, project))}${txPlansSection(project, state)}`, project, tab: 'rest', scripts: ['rest.js'] }
}

export function restScreens(context: DashboardContext): ScreenPart {
  return {
    pages: [projectPage('/rest', (ref) => restScreen(context, ref))],
    // What the project's data API serves, for the page's suggestions: read by the platform, not as a role.
    calls: [projectCall('GET', '/rest/schema.json', async (ref) => [200, await restSchema(context.controlPlane, ref)])],
  }
}
