// The project's GraphQL tab as drawn: an explorer on the project's endpoint
// (document, variables, the role to run as: anon, a chosen user,
// service_role), the schema's types to browse (by introspection when it is
// on, else read by the platform from the catalogue), the introspection switch
// with what it exposes, and the schema report. The page's script
// (assets/graphql.js) posts to the calls in forms.ts.
import type { ProjectRecord } from '../../../../lib/catalogue.ts'
import { keysView } from '../../../views.ts'
import { NO_STATE, type FormState } from '../../form-state.ts'
import { html, type Safe } from '../../html.ts'
import { INTROSPECTED_SCHEMA, introspectionOn } from '../../../graphql-schema.ts'
import { projectPage, runAsChoice, type DashboardContext, type Screen, type ScreenPart } from '../../module.ts'
import { getProject } from '../../../projects.ts'

/**
 * The document the explorer starts with: it must answer on a new project,
 * where introspection (`__schema`) is off and there are no tables yet, so it
 * asks only for `__typename`, which every schema answers.
 */
export const EXAMPLE = `# Tables and views of the exposed schemas are collections, such as:
# query { todosCollection(first: 10) { edges { node { id } } } }
# (the Types below list them). This asks only for the root type's name:
query {
  __typename
}`

/** What turning introspection on shows, and to whom: said beside the switch and in its confirmation. */
export const INTROSPECTION_EXPOSES =
  "Anyone holding the anon key (it ships inside your app) may then ask the endpoint for the schema: the name and type of every table, view, column, relation, function and enum the anon role may use; signed-in users and service_role what theirs may. It shows no rows: row-level security still decides what each caller reads."

function introspectionSection(ref: string, on: boolean, state: FormState): Safe {
  return html`<section><h2>Introspection</h2>
<p id="gql-introspection-state">Introspection of schema <code>${INTROSPECTED_SCHEMA}</code> is <span class="${on ? 'on' : 'off'}">${on ? 'on' : 'off'}</span>${on ? '.' : " (pg_graphql's default): the endpoint answers no __schema or __type, and GraphQL tools cannot read the schema."}</p>
<p>${INTROSPECTION_EXPOSES}</p>
<form method="post" action="/dashboard/projects/${ref}/graphql/introspection" ${on ? '' : html`data-confirm="Turn introspection on? ${INTROSPECTION_EXPOSES}"`}>
<input type="hidden" name="enabled" value="${on ? 'false' : 'true'}">
${state.error('introspection', '')}
<p><button class="secondary" id="gql-introspection-toggle">${on ? 'Turn introspection off' : 'Turn introspection on'}</button></p></form></section>`
}

function explorer(project: ProjectRecord, baseUrl: string): Safe {
  const ref = project.ref
  return html`<section><h2>Explorer</h2>
<p>Runs on <code id="graphql-endpoint">${baseUrl}/graphql/v1</code> as the role you choose, under its row-level security.</p>
<form id="explorer" data-run="/dashboard/projects/${ref}/graphql/run" data-types="/dashboard/projects/${ref}/graphql/types" data-report="/dashboard/projects/${ref}/graphql/report">
<div class="explorer"><div>
<label for="gql-query">Document</label><textarea id="gql-query" name="query" rows="14" spellcheck="false">${EXAMPLE}</textarea>
<label for="gql-variables">Variables (JSON)</label><textarea id="gql-variables" name="variables" rows="4" spellcheck="false" style="min-height:4rem">{}</textarea>
${runAsChoice('gql', project)}
<p id="gql-problem" class="field-error" role="alert" hidden></p>
<p><button id="gql-run">Run</button> <span id="gql-status" class="muted" aria-live="polite"></span></p>
</div><div><label for="gql-answer">Answer</label><pre id="gql-answer" tabindex="0" aria-live="polite">Run a document to see the answer.</pre></div></div>
</form></section>`
}

/** The GraphQL tab of project `ref`, with the introspection form's state. */
export async function graphqlScreen(context: DashboardContext, ref: string, state: FormState = NO_STATE): Promise<Screen> {
  const project = await getProject(context.controlPlane, ref)
  const introspection = await introspectionOn(context.controlPlane, ref)
  const keys = keysView(project, context.addressing)
  const body = html`${explorer(project, keys.base_url)}
<section><h2>Types</h2><p class="muted">With introspection on, the schema as the chosen role sees it; with it off, what the platform reads from the database's catalogue. Pick a type to see its fields.</p>
<p id="gql-types-note" class="muted" aria-live="polite"></p>
<div class="row"><label for="gql-types-role" class="check">As</label><select id="gql-types-role" style="max-width:14rem"><option value="anon">anon</option><option value="service_role">service_role</option></select>
<button type="button" class="secondary" id="gql-types-load">Load types</button></div>
<div class="explorer"><div><ul id="gql-types" class="types" aria-label="Types"></ul></div><div id="gql-type" aria-live="polite"></div></div></section>
${introspectionSection(ref, introspection, state)}
<section><h2>Schema report</h2><div id="gql-report"><p class="muted">Loading…</p></div></section>`
  return { title: 'GraphQL', body, project, tab: 'graphql', scripts: ['graphql.js'] }
}

export function graphqlScreens(context: DashboardContext): ScreenPart {
  return { pages: [projectPage('/graphql', (ref) => graphqlScreen(context, ref, NO_STATE))] }
}
