// The project's SQL tab as drawn: the editor (the SQL, who runs it, read-only,
// Run and Explain), the result (a table with each column's type, NULL shown
// apart from the text NULL, pages) or PostgreSQL's error (code, message,
// detail, hint, the line with a mark under its position), the caller's saved
// snippets and their last runs. The page's script (assets/sql.js) posts the
// runs and the snippets' changes to forms.ts's calls and draws their answers;
// history.json and snippets.json are what it reads to draw those lists again.
import type { ProjectRecord } from '../../../../lib/catalogue.ts'
import { standingOn, type Caller } from '../../../access.ts'
import { getProject } from '../../../projects.ts'
import { MAX_PAGE_ROWS, OWNER_STATEMENT_TIMEOUT_MS } from '../../../sql-editor.ts'
import { listSqlSnippets, sqlHistory, type SqlRunView, type SqlSnippetView } from '../../../sql-history.ts'
import { formatTimeout } from '../../../role-timeouts.ts'
import { empty, html, table, type Safe } from '../../html.ts'
import { projectCall, projectPage, runAsChoice, type DashboardContext, type Screen, type ScreenPart } from '../../module.ts'

export const EXAMPLE = 'select current_user, now();'

function editor(project: ProjectRecord, caller: Caller): Safe {
  const ref = project.ref
  const readOnlyMember = standingOn(caller, ref) === 'read-only'
  const timeouts = project.roleTimeouts.statementTimeoutMs
  return html`<section><h2>SQL editor</h2>
<p>Runs in the project's database, the whole text in one transaction, committed when every statement succeeds; the result shown is the last statement's. Statement timeouts: the owner ${formatTimeout(OWNER_STATEMENT_TIMEOUT_MS)}, anon ${formatTimeout(timeouts.anon)}, a user ${formatTimeout(timeouts.authenticated)}, service_role ${formatTimeout(timeouts.service_role)}.</p>
<form id="sql" data-run="/dashboard/projects/${ref}/sql/run" data-history="/dashboard/projects/${ref}/sql/history.json" data-snippets="/dashboard/projects/${ref}/sql/snippets">
<label for="sql-query">SQL</label>
<textarea id="sql-query" name="query" rows="10" spellcheck="false" style="width:100%;font-family:monospace">${EXAMPLE}</textarea>
<div class="row" style="align-items:flex-end">
<div>${runAsChoice('sql', project, { owner: true })}</div>
<div><label for="sql-limit">Rows a page</label><select id="sql-limit" name="limit"><option value="100">100</option><option value="500">500</option><option value="${MAX_PAGE_ROWS}">${MAX_PAGE_ROWS}</option></select></div>
</div>
<label class="check"><input type="checkbox" id="sql-read-only" name="read_only" value="true" ${readOnlyMember ? html`checked disabled aria-describedby="sql-read-only-note"` : ''}> Read-only transaction</label>
${readOnlyMember ? html`<p id="sql-read-only-note" class="muted">Your role on this project is read-only: your runs are read-only transactions.</p>` : ''}
<label class="check"><input type="checkbox" id="sql-analyze" name="analyze" value="true"> Explain with ANALYZE (the statement runs; the run is rolled back)</label>
<label class="check"><input type="checkbox" id="sql-explain-json" name="explain_json" value="true"> Explain as JSON</label>
<p id="sql-problem" class="field-error" role="alert" hidden></p>
<p><button id="sql-run">Run</button> <button type="button" class="secondary" id="sql-explain">Explain</button> <span id="sql-status" class="muted" aria-live="polite"></span></p>
</form></section>`
}

const resultSection = html`<section aria-labelledby="sql-result-label"><h2 id="sql-result-label">Result</h2>
<p id="sql-meta" aria-live="polite">Run a statement to see its result.</p>
<div id="sql-error" hidden><dl style="display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.2rem .75rem;margin:.25rem 0 .75rem;overflow-wrap:anywhere">
<dt>code</dt><dd id="sql-error-code" style="margin:0"></dd><dt>message</dt><dd id="sql-error-message" style="margin:0"></dd>
<dt>detail</dt><dd id="sql-error-detail" style="margin:0"></dd><dt>hint</dt><dd id="sql-error-hint" style="margin:0"></dd>
<dt>position</dt><dd id="sql-error-position" style="margin:0"></dd></dl>
<pre id="sql-error-at"></pre></div>
<pre id="sql-plan" hidden></pre>
<div style="overflow:auto;max-height:32rem"><table id="sql-result" hidden><thead></thead><tbody></tbody></table></div>
<p class="row"><button type="button" class="secondary" id="sql-prev" hidden>Previous page</button> <button type="button" class="secondary" id="sql-next" hidden>Next page</button></p>
<p class="muted">A NULL shows as <span class="sql-null" style="font-style:italic;color:#8a939e">NULL</span>; the text 'NULL' as written. Another page runs the text again, in a read-only transaction.</p></section>`

function snippetsSection(snippets: SqlSnippetView[]): Safe {
  const rows = snippets.map(
    (s) => html`<tr data-id="${s.id}"><td>${s.name}</td><td><code>${s.query.length > 120 ? `${s.query.slice(0, 120)}…` : s.query}</code></td>
<td><button type="button" class="secondary" data-load="${s.id}">Open</button> <button type="button" class="secondary" data-save="${s.id}">Save the editor's text here</button> <button type="button" class="secondary" data-delete="${s.id}">Delete</button></td></tr>`,
  )
  return html`<section><h2>Saved snippets</h2>
<p class="muted">Yours alone in this project.</p>
<div id="sql-snippets">${snippets.length === 0 ? empty('No snippets saved yet.') : table(['name', 'SQL', ''], rows, undefined, { stacked: true })}</div>
<div class="row" style="align-items:flex-end"><div><label for="sql-snippet-name">Save the editor's text as</label><input type="text" id="sql-snippet-name" autocomplete="off" maxlength="100"></div>
<p><button type="button" class="secondary" id="sql-snippet-save">Save snippet</button></p></div>
<p id="sql-snippet-problem" class="field-error" role="alert" hidden></p></section>`
}

function historySection(runs: SqlRunView[]): Safe {
  const rows = runs.map(
    (run) => html`<tr><td>${run.at.replace('T', ' ').slice(0, 19)}</td><td>${run.role}${run.explain ? ' (explain)' : ''}${run.read_only ? ' (read-only)' : ''}</td>
<td>${run.duration_ms} ms</td><td>${run.error_code === null ? `${run.row_count ?? '?'} rows` : `error ${run.error_code}`}</td>
<td><code>${run.query.length > 120 ? `${run.query.slice(0, 120)}…` : run.query}</code></td></tr>`,
  )
  return html`<section><h2>History</h2>
<p class="muted">Your last runs in this project, newest first.</p>
<div id="sql-history">${runs.length === 0 ? empty('No runs yet.') : table(['when (UTC)', 'as', 'took', 'answer', 'SQL'], rows, undefined, { stacked: true })}</div></section>`
}

export async function sqlScreen(context: DashboardContext, ref: string, caller: Caller): Promise<Screen> {
  const project = await getProject(context.controlPlane, ref)
  const [snippets, history] = await Promise.all([listSqlSnippets(context.controlPlane, ref, caller), sqlHistory(context.controlPlane, ref, caller, 20)])
  return {
    title: 'SQL',
    project,
    tab: 'sql',
    scripts: ['sql.js'],
    body: html`${editor(project, caller)}${resultSection}${snippetsSection(snippets.snippets)}${historySection(history.runs)}`,
  }
}

export function sqlScreens(context: DashboardContext): ScreenPart {
  return {
    pages: [{ ...projectPage('/sql', (ref, input) => sqlScreen(context, ref, input.caller)), access: 'read' }],
    calls: [
      { ...projectCall('GET', '/sql/history.json', async (ref, input) => [200, await sqlHistory(context.controlPlane, ref, input.caller, 20)]), access: 'read' },
      { ...projectCall('GET', '/sql/snippets.json', async (ref, input) => [200, await listSqlSnippets(context.controlPlane, ref, input.caller)]), access: 'read' },
    ],
  }
}
