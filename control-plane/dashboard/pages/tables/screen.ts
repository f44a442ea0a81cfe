// The project's Tables tab as drawn (the table editor, control-plane/table-editor.ts):
// the schemas and their tables, a new table's form; a chosen table's rows
// (`?schema=&table=`, paged by `offset`, sorted by `sort` and `order`,
// filtered by `fc` `fo` `fv`) with a row's insert form, an edit form for the
// row named by `k.<column>` (its primary key) and a delete button a row; and
// its structure (`&view=structure`): columns, keys, constraints, indexes,
// row-level security with its switch, the policies with Supabase's templates,
// and the forms that change the table or drop it. The forms are in forms.ts;
// a refused one draws this page again with the typed values and the error
// beside its field (form-state.ts). A member who may only read sees no forms.
import { allows, type Caller } from '../../../access.ts'
import { BaseplaneError } from '../../../../lib/errors.ts'
import { getProject } from '../../../projects.ts'
import {
  DEFAULT_EXPRESSIONS,
  DEFAULT_ROWS,
  FILTER_OPERATORS,
  POLICY_TEMPLATES,
  describeTable,
  listRows,
  listTables,
  type RowsView,
  type TablesView,
  type TableView,
} from '../../../table-editor.ts'
import { NO_STATE, type FormState } from '../../form-state.ts'
import { empty, html, Safe, table } from '../../html.ts'
import { offScreen, projectPage, type DashboardContext, type Screen, type ScreenPart } from '../../module.ts'

/** Column rows a new table's form offers unless `?columns=` asks for more. */
export const NEW_TABLE_COLUMNS = 5
const MAX_NEW_TABLE_COLUMNS = 30

const OPERATOR_WORDS: Record<string, string> = { eq: '=', neq: '≠', lt: '<', lte: '≤', gt: '>', gte: '≥', like: 'like', ilike: 'ilike', is_null: 'is null', not_null: 'is not null' }

/** The tab's URL for a table (and its view), the query's values encoded. */
export function tablesPath(ref: string, schema?: string, name?: string, extra: Record<string, string> = {}): string {
  const query = new URLSearchParams()
  if (schema !== undefined) query.set('schema', schema)
  if (name !== undefined) query.set('table', name)
  for (const [key, value] of Object.entries(extra)) if (value !== '') query.set(key, value)
  const text = query.toString()
  return `/projects/${ref}/tables${text ? `?${text}` : ''}`
}

const checked = (on: boolean) => (on ? new Safe('checked') : '')
const selected = (on: boolean) => (on ? new Safe('selected') : '')

function hidden(fields: Record<string, string>): Safe {
  return html`${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}`
}

function typesList(types: readonly string[]): Safe {
  return html`<datalist id="te-types">${types.map((type) => html`<option value="${type}">`)}</datalist>
<datalist id="te-defaults">${DEFAULT_EXPRESSIONS.map((e) => html`<option value="${e}">`)}</datalist>`
}

function schemaSection(ref: string, view: TablesView, schema: string, chosen: string | undefined): Safe {
  const current = view.schemas.find((s) => s.name === schema)
  const rows = (current?.tables ?? []).map(
    (t) => html`<tr data-table="${t.name}"><td class="line"><a href="/dashboard${tablesPath(ref, schema, t.name)}" ${t.name === chosen ? new Safe('aria-current="true"') : ''}>${t.name}</a></td>
<td class="half">${t.rls_enabled ? (t.rls_forced ? 'RLS forced' : 'RLS on') : html`<span class="muted">RLS off</span>`}</td><td class="half">${t.rows_estimate > 0 ? `~${Math.round(t.rows_estimate)}` : ''}</td></tr>`,
  )
  return html`<section aria-labelledby="te-schemas"><h2 id="te-schemas">Tables</h2>
<form method="get" action="/dashboard/projects/${ref}/tables" class="row">
<label for="te-schema">Schema</label><select id="te-schema" name="schema">${view.schemas.map(
    (s) => html`<option value="${s.name}" ${selected(s.name === schema)}>${s.name}${s.editable ? '' : ' (read-only)'}</option>`,
  )}</select><button class="secondary">Show</button></form>
${current && !current.editable ? html`<p class="muted" id="te-read-only">Schema <code>${schema}</code> is the platform's: its tables are shown, not changed here.</p>` : ''}
<div id="te-table-list">${rows.length === 0 ? empty(html`No tables in <code>${schema}</code> yet.`) : table(['Table', 'Row-level security', 'Rows (estimate)'], rows)}</div></section>`
}

function newTableSection(ref: string, schema: string, columns: number, state: FormState): Safe {
  const form = 'table_create'
  const v = (field: string, stored: string) => state.value(form, field, stored)
  const starter = [
    { name: 'id', type: 'int8', default: '', primary_key: true, nullable: false, identity: true },
    { name: 'created_at', type: 'timestamptz', default: 'now()', primary_key: false, nullable: false, identity: false },
  ]
  const refused = state.refusal?.form === form
  const row = (i: number) => {
    const start = starter[i]
    const f = (name: string) => `columns.${i}.${name}`
    const box = (name: string, on: boolean) => (refused ? v(f(name), '') === 'on' : on)
    return html`<fieldset class="te-column" id="te-new-column-${i}"><legend>Column ${i + 1}</legend>
<label for="te-new-${i}-name">Name</label><input type="text" id="te-new-${i}-name" name="${f('name')}" value="${v(f('name'), start?.name ?? '')}" autocomplete="off" ${state.attrs(form, f('name'))}>${state.error(form, f('name'))}
<label for="te-new-${i}-type">Type</label><input type="text" id="te-new-${i}-type" name="${f('type')}" list="te-types" value="${v(f('type'), start?.type ?? '')}" autocomplete="off" ${state.attrs(form, f('type'))}>${state.error(form, f('type'))}
<label for="te-new-${i}-default">Default</label><input type="text" id="te-new-${i}-default" name="${f('default')}" list="te-defaults" value="${v(f('default'), start?.default ?? '')}" autocomplete="off" ${state.attrs(form, f('default'))}>${state.error(form, f('default'))}
<label for="te-new-${i}-references">References (<code>table.column</code> or <code>schema.table.column</code>)</label><input type="text" id="te-new-${i}-references" name="${f('references')}" value="${v(f('references'), '')}" autocomplete="off" ${state.attrs(form, f('references'))}>${state.error(form, f('references'))}
<label class="check"><input type="checkbox" id="te-new-${i}-pk" name="${f('primary_key')}" ${checked(box('primary_key', start?.primary_key ?? false))}> Primary key</label>${state.error(form, f('primary_key'))}
<label class="check"><input type="checkbox" id="te-new-${i}-identity" name="${f('identity')}" ${checked(box('identity', start?.identity ?? false))}> Identity (numbered by PostgreSQL)</label>${state.error(form, f('identity'))}
<label class="check"><input type="checkbox" id="te-new-${i}-nullable" name="${f('nullable')}" ${checked(box('nullable', start?.nullable ?? true))}> May be NULL</label>
<label class="check"><input type="checkbox" id="te-new-${i}-unique" name="${f('unique')}" ${checked(box('unique', false))}> Unique</label></fieldset>`
  }
  return html`<section aria-labelledby="te-new"><h2 id="te-new">New table in ${schema}</h2>
<form method="post" action="/dashboard/projects/${ref}/tables/create" id="te-create">
${hidden({ schema, columns_shown: String(columns) })}
<label for="te-new-name">Name</label><input type="text" id="te-new-name" name="name" value="${v('name', '')}" autocomplete="off" ${state.attrs(form, 'name')}>${state.error(form, 'name')}
<label class="check"><input type="checkbox" id="te-new-rls" name="rls" ${checked(refused ? v('rls', '') === 'on' : true)}> Row-level security on (no policy yet: the API roles see no rows until one is added)</label>
${Array.from({ length: columns }, (_, i) => row(i))}
${state.error(form, 'columns')}${state.error(form, '')}
<p class="row"><button id="te-create-button">Create table</button> <a href="/dashboard${tablesPath(ref, schema, undefined, { columns: String(Math.min(columns + 5, MAX_NEW_TABLE_COLUMNS)) })}">More columns</a></p>
<p class="muted">Empty column rows are left out. A default is a value of the column's type, or one of ${DEFAULT_EXPRESSIONS.join(', ')}.</p></form></section>`
}

/** A cell's text: NULL drawn as such, so it is never mistaken for an empty string. */
function cell(value: string | null | undefined): Safe {
  if (value === null || value === undefined) return html`<td class="line null"><span class="muted">NULL</span></td>`
  return html`<td class="line" title="${value}">${value.length > 200 ? `${value.slice(0, 200)}…` : value}</td>`
}

function keyOf(rows: RowsView, row: Record<string, string | null>): Record<string, string> {
  return Object.fromEntries(rows.primary_key.map((column) => [`k.${column}`, row[column] ?? '']))
}

function rowsSection(ref: string, info: TableView, rows: RowsView, query: URLSearchParams, writer: boolean, state: FormState): Safe {
  const base = { schema: info.schema, table: info.name }
  const keep = { sort: query.get('sort') ?? '', order: query.get('order') ?? '', fc: query.get('fc') ?? '', fo: query.get('fo') ?? '', fv: query.get('fv') ?? '' }
  const editable = info.editable && writer && rows.primary_key.length > 0
  const head = [...rows.columns.map((c) => c.name), ...(editable ? [''] : [])]
  const body = rows.rows.map((row) => {
    const key = keyOf(rows, row)
    const actions = editable
      ? html`<td class="row"><a class="button secondary" href="/dashboard${tablesPath(ref, info.schema, info.name, { ...keep, ...key })}">Edit</a>
<form method="post" class="inline" action="/dashboard/projects/${ref}/tables/rows/delete" data-confirm="Delete this row of ${info.name}?">${hidden({ ...base, ...key })}<button class="danger">Delete</button></form></td>`
      : ''
    return html`<tr>${rows.columns.map((c) => cell(row[c.name]))}${actions}</tr>`
  })
  const offset = rows.offset
  const prev = offset > 0 ? html`<a class="button secondary" href="/dashboard${tablesPath(ref, info.schema, info.name, { ...keep, offset: String(Math.max(0, offset - rows.limit)) })}">Previous</a>` : ''
  const next = offset + rows.rows.length < rows.total ? html`<a class="button secondary" id="te-next" href="/dashboard${tablesPath(ref, info.schema, info.name, { ...keep, offset: String(offset + rows.limit) })}">Next</a>` : ''
  const columnChoice = (name: string, value: string, blank: string) =>
    html`<option value="">${blank}</option>${rows.columns.map((c) => html`<option value="${c.name}" ${selected(c.name === value)}>${c.name}</option>`)}`
  return html`<section aria-labelledby="te-rows"><h2 id="te-rows">Rows</h2>
<form method="get" action="/dashboard/projects/${ref}/tables" class="row" id="te-filter">${hidden(base)}
<label for="te-sort">Sort by</label><select id="te-sort" name="sort">${columnChoice('sort', keep.sort, rows.primary_key.length > 0 ? 'primary key' : 'none')}</select>
<select id="te-order" name="order" aria-label="Order"><option value="asc" ${selected(keep.order !== 'desc')}>ascending</option><option value="desc" ${selected(keep.order === 'desc')}>descending</option></select>
<label for="te-fc">Where</label><select id="te-fc" name="fc">${columnChoice('fc', keep.fc, 'no filter')}</select>
<select id="te-fo" name="fo" aria-label="Operator">${FILTER_OPERATORS.map((op) => html`<option value="${op}" ${selected(op === keep.fo)}>${OPERATOR_WORDS[op]}</option>`)}</select>
<input type="text" id="te-fv" name="fv" value="${keep.fv}" aria-label="Value" autocomplete="off">
<button class="secondary">Apply</button></form>
${state.error('rows', '')}
<p class="muted" id="te-count">${rows.total === 0 ? 'No rows' : `Rows ${offset + 1} to ${offset + rows.rows.length} of ${rows.total}`}${rows.primary_key.length === 0 ? ' (no primary key: rows cannot be edited or deleted here)' : ''}.</p>
<div id="te-grid">${body.length === 0 ? empty('No rows match.') : table(head, body)}</div>
<p class="row">${prev}${next}</p>${state.error('row_delete', '')}</section>`
}

function valueInputs(form: string, info: TableView, state: FormState, stored: Record<string, string | null>, fresh: boolean): Safe {
  return html`${info.columns
    .filter((c) => !c.generated && c.identity !== 'always')
    .map((c) => {
      const field = `v.${c.name}`
      const nullField = `n.${c.name}`
      const refused = state.refusal?.form === form
      const value = state.value(form, field, stored[c.name] ?? '')
      const isNull = refused ? state.value(form, nullField, '') === 'on' : !fresh && stored[c.name] === null
      const hint = fresh ? (c.default ?? (c.identity ? 'numbered by PostgreSQL' : c.nullable ? 'NULL' : '')) : ''
      const id = `${form}-${c.name}`
      return html`<div class="te-field"><label for="${id}">${c.name} <span class="muted">${c.type}${c.nullable || c.default !== null || c.identity !== null ? '' : ', required'}</span></label>
<input type="text" id="${id}" name="${field}" value="${value}" placeholder="${hint}" autocomplete="off" ${state.attrs(form, field)}>
${c.nullable ? html`<label class="check"><input type="checkbox" name="${nullField}" ${checked(isNull)}> NULL</label>` : ''}${state.error(form, field)}</div>`
    })}`
}

function insertSection(ref: string, info: TableView, state: FormState): Safe {
  return html`<section aria-labelledby="te-insert"><h2 id="te-insert">Insert a row</h2>
<form method="post" action="/dashboard/projects/${ref}/tables/rows/insert" id="te-insert-form">${hidden({ schema: info.schema, table: info.name })}
${valueInputs('row_insert', info, state, {}, true)}
${state.error('row_insert', '')}
<p><button id="te-insert-button">Insert row</button></p>
<p class="muted">An empty input takes the column's default; each value is read as its column's type, as psql reads it.</p></form></section>`
}

function editSection(ref: string, info: TableView, row: Record<string, string | null> | undefined, key: Record<string, string>, state: FormState): Safe {
  if (!row) return html`<section><h2>Edit a row</h2>${empty('No row has that primary key any more.')}</section>`
  return html`<section aria-labelledby="te-edit"><h2 id="te-edit">Edit the row</h2>
<form method="post" action="/dashboard/projects/${ref}/tables/rows/update" id="te-edit-form">${hidden({ schema: info.schema, table: info.name, ...key })}
${valueInputs('row_update', info, state, row, false)}
${state.error('row_update', '')}
<p><button id="te-update-button">Save row</button></p></form></section>`
}

function structureSection(info: TableView): Safe {
  const columns = info.columns.map(
    (c) => html`<tr data-column="${c.name}"><td class="line"><code>${c.name}</code>${c.primary_key ? html` <span class="muted">primary key</span>` : ''}</td><td class="half">${c.type}</td>
<td class="half">${c.nullable ? 'yes' : 'no'}</td><td class="line">${c.identity ? `identity (${c.identity})` : c.generated ? 'generated' : (c.default ?? '')}</td></tr>`,
  )
  const keys = [
    ...info.foreign_keys.map((fk) => html`<tr><td class="line"><code>${fk.name}</code></td><td class="half">foreign key</td><td class="line">(${fk.columns.join(', ')}) → ${fk.references.schema}.${fk.references.table} (${fk.references.columns.join(', ')}), on delete ${fk.on_delete}</td></tr>`),
    ...info.unique_constraints.map((u) => html`<tr><td class="line"><code>${u.name}</code></td><td class="half">unique</td><td class="line">(${u.columns.join(', ')})</td></tr>`),
    ...info.check_constraints.map((c) => html`<tr><td class="line"><code>${c.name}</code></td><td class="half">check</td><td class="line">${c.definition}</td></tr>`),
  ]
  const indexes = info.indexes.map((i) => html`<tr><td class="line"><code>${i.name}</code></td><td class="lines">${i.definition}</td></tr>`)
  return html`<section aria-labelledby="te-structure"><h2 id="te-structure">Structure</h2>
<div id="te-columns">${table(['Column', 'Type', 'Nullable', 'Default'], columns)}</div>
<p id="te-primary-key">Primary key: ${info.primary_key.length === 0 ? html`<span class="muted">none</span>` : html`<code>${info.primary_key.join(', ')}</code>`}</p>
<h3>Constraints</h3><div id="te-constraints">${keys.length === 0 ? empty('No foreign keys, unique or check constraints.') : table(['Name', 'Kind', 'Definition'], keys)}</div>
<h3>Indexes</h3><div id="te-indexes">${indexes.length === 0 ? empty('No indexes.') : table(['Name', 'Definition'], indexes)}</div></section>`
}

function securitySection(ref: string, info: TableView, writer: boolean, state: FormState): Safe {
  const base = { schema: info.schema, table: info.name }
  const change = info.editable && writer
  const policies = info.policies.map(
    (p) => html`<tr data-policy="${p.name}"><td class="line">${p.name}</td><td class="half">${p.command}</td><td class="half">${p.roles.join(', ')}</td><td class="line"><code>${p.using ?? ''}</code></td><td class="line"><code>${p.with_check ?? ''}</code></td>
${change ? html`<td><form method="post" class="inline" action="/dashboard/projects/${ref}/tables/policies/drop" data-confirm="Drop policy ${p.name}?">${hidden({ ...base, policy: p.name })}<button class="danger">Drop</button></form></td>` : ''}</tr>`,
  )
  const uuidColumns = info.columns.filter((c) => c.type === 'uuid')
  const form = 'policy_add'
  return html`<section aria-labelledby="te-security"><h2 id="te-security">Row-level security</h2>
<p id="te-rls-state">${info.rls.enabled ? html`<strong>On</strong>${info.rls.forced ? ' and forced on the owner too' : ''}: the API roles see only the rows a policy lets them.` : html`<strong>Off</strong>: the API roles' grants alone decide; anyone with the anon key reads and writes every row.`}</p>
${change ? html`<form method="post" action="/dashboard/projects/${ref}/tables/rls" class="row">${hidden({ ...base, enabled: info.rls.enabled ? 'off' : 'on' })}<button class="secondary" id="te-rls-toggle">${info.rls.enabled ? 'Turn row-level security off' : 'Turn row-level security on'}</button></form>${state.error('rls', '')}` : ''}
<h3>Policies</h3><div id="te-policies">${policies.length === 0 ? empty('No policies.') : table(['Name', 'Command', 'Roles', 'Using', 'With check', ...(change ? [''] : [])], policies)}</div>
${state.error('policy_drop', '')}
${change ? html`<form method="post" action="/dashboard/projects/${ref}/tables/policies" id="te-policy-form">${hidden(base)}
<label for="te-template">Add a policy from a template</label><select id="te-template" name="template" ${state.attrs(form, 'template')}>${Object.entries(POLICY_TEMPLATES).map(
    ([id, t]) => html`<option value="${id}" ${selected(state.value(form, 'template', 'read_all') === id)}>${t.label} (${t.command} to ${t.roles.join(', ')})</option>`,
  )}</select>${state.error(form, 'template')}
<label for="te-policy-column">Column holding the user's id (for the "own data" templates)</label><select id="te-policy-column" name="column" ${state.attrs(form, 'column')}><option value="">none</option>${uuidColumns.map(
    (c) => html`<option value="${c.name}" ${selected(state.value(form, 'column', '') === c.name)}>${c.name}</option>`,
  )}</select>${state.error(form, 'column')}
<label for="te-policy-name">Name (the template's when empty)</label><input type="text" id="te-policy-name" name="name" value="${state.value(form, 'name', '')}" autocomplete="off" ${state.attrs(form, 'name')}>${state.error(form, 'name')}
${state.error(form, '')}<p><button class="secondary" id="te-policy-button">Add policy</button></p>
<p class="muted">The "own data" templates compare <code>(select auth.uid())</code>, the signed-in user's id, with that column, as Supabase's do.</p></form>` : ''}</section>`
}

function alterSection(ref: string, info: TableView, types: readonly string[], state: FormState): Safe {
  const base = { schema: info.schema, table: info.name }
  const v = (form: string, field: string) => state.value(form, field, '')
  const columnSelect = (form: string, id: string, name = 'column') =>
    html`<select id="${id}" name="${name}" ${state.attrs(form, name)}>${info.columns.map((c) => html`<option value="${c.name}" ${selected(v(form, name) === c.name)}>${c.name}</option>`)}</select>${state.error(form, name)}`
  const constraintNames = [...info.foreign_keys.map((f) => f.name), ...info.unique_constraints.map((u) => u.name), ...info.check_constraints.map((c) => c.name)]
  return html`<section aria-labelledby="te-alter"><h2 id="te-alter">Change the table</h2>${typesList(types)}
<form method="post" action="/dashboard/projects/${ref}/tables/columns/add" id="te-add-column">${hidden(base)}<h3>Add a column</h3>
<label for="te-add-name">Name</label><input type="text" id="te-add-name" name="name" value="${v('column_add', 'name')}" autocomplete="off" ${state.attrs('column_add', 'name')}>${state.error('column_add', 'name')}
<label for="te-add-type">Type</label><input type="text" id="te-add-type" name="type" list="te-types" value="${v('column_add', 'type')}" autocomplete="off" ${state.attrs('column_add', 'type')}>${state.error('column_add', 'type')}
<label for="te-add-default">Default</label><input type="text" id="te-add-default" name="default" list="te-defaults" value="${v('column_add', 'default')}" autocomplete="off" ${state.attrs('column_add', 'default')}>${state.error('column_add', 'default')}
<label for="te-add-references">References (<code>table.column</code>)</label><input type="text" id="te-add-references" name="references" value="${v('column_add', 'references')}" autocomplete="off" ${state.attrs('column_add', 'references')}>${state.error('column_add', 'references')}
<label class="check"><input type="checkbox" name="nullable" ${checked(state.refusal?.form === 'column_add' ? v('column_add', 'nullable') === 'on' : true)}> May be NULL</label>
<label class="check"><input type="checkbox" name="unique" ${checked(v('column_add', 'unique') === 'on')}> Unique</label>
${state.error('column_add', '')}<p><button class="secondary" id="te-add-column-button">Add column</button></p></form>
<form method="post" action="/dashboard/projects/${ref}/tables/columns/change" id="te-change-column">${hidden(base)}<h3>Change a column</h3>
<label for="te-change-column-name">Column</label>${columnSelect('column_change', 'te-change-column-name')}
<label for="te-change-rename">New name (empty: keep)</label><input type="text" id="te-change-rename" name="rename" value="${v('column_change', 'rename')}" autocomplete="off" ${state.attrs('column_change', 'rename')}>${state.error('column_change', 'rename')}
<label for="te-change-type">New type (empty: keep)</label><input type="text" id="te-change-type" name="type" list="te-types" value="${v('column_change', 'type')}" autocomplete="off" ${state.attrs('column_change', 'type')}>${state.error('column_change', 'type')}
<label for="te-change-default">New default (empty: keep)</label><input type="text" id="te-change-default" name="default" list="te-defaults" value="${v('column_change', 'default')}" autocomplete="off" ${state.attrs('column_change', 'default')}>${state.error('column_change', 'default')}
<label class="check"><input type="checkbox" name="drop_default" ${checked(v('column_change', 'drop_default') === 'on')}> Drop the default</label>
<label for="te-change-nullable">May be NULL</label><select id="te-change-nullable" name="nullable"><option value="">keep</option><option value="yes" ${selected(v('column_change', 'nullable') === 'yes')}>yes</option><option value="no" ${selected(v('column_change', 'nullable') === 'no')}>no</option></select>${state.error('column_change', 'nullable')}
${state.error('column_change', '')}<p><button class="secondary" id="te-change-column-button">Change column</button></p></form>
<form method="post" action="/dashboard/projects/${ref}/tables/columns/drop" id="te-drop-column" data-confirm="Drop the column and its values?">${hidden(base)}<h3>Drop a column</h3>
<label for="te-drop-column-name">Column</label>${columnSelect('column_drop', 'te-drop-column-name')}
${state.error('column_drop', '')}<p><button class="danger">Drop column</button></p></form>
<form method="post" action="/dashboard/projects/${ref}/tables/foreign-keys/add" id="te-add-fk">${hidden(base)}<h3>Add a foreign key</h3>
<label for="te-fk-column">Column</label>${columnSelect('fk_add', 'te-fk-column')}
<label for="te-fk-references">References (<code>table.column</code> or <code>schema.table.column</code>)</label><input type="text" id="te-fk-references" name="references" value="${v('fk_add', 'references')}" autocomplete="off" ${state.attrs('fk_add', 'references')}>${state.error('fk_add', 'references')}
<label for="te-fk-delete">On delete</label><select id="te-fk-delete" name="on_delete">${['no action', 'restrict', 'cascade', 'set null', 'set default'].map((a) => html`<option value="${a}" ${selected(v('fk_add', 'on_delete') === a)}>${a}</option>`)}</select>
${state.error('fk_add', '')}<p><button class="secondary">Add foreign key</button></p></form>
${constraintNames.length === 0 ? '' : html`<form method="post" action="/dashboard/projects/${ref}/tables/constraints/drop" id="te-drop-constraint" data-confirm="Drop the constraint?">${hidden(base)}<h3>Drop a constraint</h3>
<label for="te-constraint-name">Constraint</label><select id="te-constraint-name" name="name">${constraintNames.map((n) => html`<option value="${n}">${n}</option>`)}</select>
${state.error('constraint_drop', '')}<p><button class="danger">Drop constraint</button></p></form>`}
<form method="post" action="/dashboard/projects/${ref}/tables/drop" id="te-drop-table">${hidden(base)}<h3>Drop the table</h3>
<label for="te-drop-confirm">Type <code>${info.name}</code> to drop it and every row in it</label><input type="text" id="te-drop-confirm" name="confirm" value="" autocomplete="off" ${state.attrs('table_drop', 'confirm')}>${state.error('table_drop', 'confirm')}
<p><button class="danger">Drop table</button></p></form></section>`
}

function chosenTable(ref: string, info: TableView, view: string, body: Safe): Safe {
  const link = (to: string, label: string) =>
    html`<a href="/dashboard${tablesPath(ref, info.schema, info.name, to === 'rows' ? {} : { view: to })}" ${view === to ? new Safe('aria-current="page" class="button"') : new Safe('class="button secondary"')}>${label}</a>`
  return html`<section aria-labelledby="te-table"><h2 id="te-table"><code>${info.schema}.${info.name}</code></h2>
<p class="row" id="te-views">${link('rows', 'Rows')} ${link('structure', 'Structure')}</p>${info.editable ? '' : html`<p class="muted">Read-only: the platform's table.</p>`}</section>${body}`
}

/** The Tables tab of project `ref` for the page's query (or a refused form's hidden fields), with a form's state. */
export async function tablesScreen(context: DashboardContext, ref: string, caller: Caller, query: URLSearchParams, state: FormState): Promise<Screen> {
  const project = await getProject(context.controlPlane, ref)
  if (project.state !== 'active') {
    return offScreen(project, 'tables', 'Tables', html`The project is ${project.state}: its database takes no connections until it is resumed (Settings).`)
  }
  const view = await listTables(context.controlPlane, ref)
  const writer = allows(caller, ref, 'write')
  const schema = query.get('schema') || 'public'
  const name = query.get('table') || undefined
  const shownSchema = view.schemas.find((s) => s.name === schema)
  const columnsWanted = Math.min(Math.max(Number(query.get('columns')) || NEW_TABLE_COLUMNS, NEW_TABLE_COLUMNS), MAX_NEW_TABLE_COLUMNS)
  const parts: Safe[] = [schemaSection(ref, view, schema, name)]
  if (name !== undefined && shownSchema) {
    let info: TableView | undefined
    try {
      info = await describeTable(context.controlPlane, ref, schema, name)
    } catch (error) {
      if (!BaseplaneError.is(error) || error.status !== 404) throw error
      parts.push(html`<section>${empty(html`No table <code>${name}</code> in <code>${schema}</code>.`)}</section>`)
    }
    if (info) {
      const tab = query.get('view') === 'structure' ? 'structure' : 'rows'
      if (tab === 'structure') {
        const body = html`${structureSection(info)}${securitySection(ref, info, writer, state)}${info.editable && writer ? alterSection(ref, info, view.types, state) : ''}`
        parts.push(chosenTable(ref, info, tab, body))
      } else {
        parts.push(chosenTable(ref, info, tab, await rowsPart(context, ref, info, query, writer, state)))
      }
    }
  } else if (shownSchema?.editable && writer) {
    parts.push(html`${typesList(view.types)}${newTableSection(ref, schema, Number(state.value('table_create', 'columns_shown', String(columnsWanted))) || columnsWanted, state)}`)
  }
  return { title: 'Tables', project, tab: 'tables', body: html`${parts}` }
}

async function rowsPart(context: DashboardContext, ref: string, info: TableView, query: URLSearchParams, writer: boolean, state: FormState): Promise<Safe> {
  const fc = query.get('fc') ?? ''
  const filters = fc === '' ? [] : [{ column: fc, operator: query.get('fo') ?? 'eq', value: query.get('fv') ?? '' }]
  const request = { limit: DEFAULT_ROWS, offset: Number(query.get('offset')) || 0, sort: query.get('sort') || undefined, descending: query.get('order') === 'desc', filters }
  let problem: Safe = html``
  const refusedAs = (error: unknown): void => {
    if (!BaseplaneError.is(error) || error.status >= 500 || error.status === 404) throw error
    problem = html`<p class="field-error" role="alert" id="te-rows-problem">${error.message}</p>`
  }
  // A filter PostgreSQL cannot apply shows the first page unfiltered beside its reason; a table the owner may not read (most of auth's) shows none.
  const none: RowsView = { ref, schema: info.schema, table: info.name, columns: info.columns.map((c) => ({ name: c.name, type: c.type })), primary_key: info.primary_key, rows: [], total: 0, limit: DEFAULT_ROWS, offset: 0 }
  let rows = await listRows(context.controlPlane, ref, info.schema, info.name, request).catch((error: unknown) => (refusedAs(error), undefined))
  if (rows === undefined && (filters.length > 0 || request.sort !== undefined || request.offset > 0)) {
    rows = await listRows(context.controlPlane, ref, info.schema, info.name, { limit: DEFAULT_ROWS }).catch(() => undefined)
  }
  rows ??= none
  const key: Record<string, string> = {}
  for (const column of rows.primary_key) {
    const value = query.get(`k.${column}`)
    if (value !== null) key[column] = value
  }
  const editing = rows.primary_key.length > 0 && Object.keys(key).length === rows.primary_key.length
  let edit: Safe = html``
  if (editing && writer && info.editable) {
    const found = await listRows(context.controlPlane, ref, info.schema, info.name, { limit: 1, filters: rows.primary_key.map((column) => ({ column, operator: 'eq', value: key[column]! })) })
    edit = editSection(ref, info, found.rows[0], Object.fromEntries(Object.entries(key).map(([c, value]) => [`k.${c}`, value])), state)
  }
  return html`${problem}${rowsSection(ref, info, rows, query, writer, state)}${edit}${info.editable && writer ? insertSection(ref, info, state) : ''}`
}

export function tablesScreens(context: DashboardContext): ScreenPart {
  const page = projectPage('/tables', (ref, input) => tablesScreen(context, ref, input.caller, input.query, NO_STATE))
  return { pages: [{ ...page, access: 'read' }] }
}
