// The Tables tab's forms: a table made, a row inserted, edited or deleted, a
// column added, changed or dropped, a foreign key added, a constraint
// dropped, the table dropped, row-level security switched, a policy added
// from a template or dropped. Each calls control-plane/table-editor.ts, as
// the admin API does; a refusal draws the tab again with what was typed and
// the error beside its input: a constraint's beside its column's input
// (`v.<column>`), a definition's beside the input its field names.
import { platformErrors } from '../../../../lib/errors.ts'
import {
  addPolicy,
  alterTable,
  createTable,
  deleteRow,
  dropPolicy,
  dropTable,
  insertRow,
  setRowLevelSecurity,
  updateRow,
} from '../../../table-editor.ts'
import { refusable, type FormSpec, type FormState, type Saved } from '../../form-state.ts'
import { projectForm, type DashboardContext, type DashboardForm, type FormAnswer, type FormInput, type FormsPart } from '../../module.ts'
import { NEW_TABLE_COLUMNS, tablesPath, tablesScreen } from './screen.ts'

const COLUMN_FIELDS = ['name', 'type', 'default', 'references', 'primary_key', 'identity', 'nullable', 'unique'] as const
const MAX_COLUMNS = 30

/** `table.column` or `schema.table.column` as the operations take a reference; undefined when empty. */
function referenceOf(text: string, field: string): { schema?: string; table: string; column: string } | undefined {
  const value = text.trim()
  if (value === '') return undefined
  const parts = value.split('.')
  if (parts.length === 2) return { table: parts[0]!, column: parts[1]! }
  if (parts.length === 3) return { schema: parts[0]!, table: parts[1]!, column: parts[2]! }
  throw platformErrors.invalidArgument(`${field}: write table.column or schema.table.column`, field)
}

/** The page a refused form draws again: its table (and row) from the form's hidden fields. */
function queryOf(input: FormInput, view: 'rows' | 'structure' | 'list'): URLSearchParams {
  const query = new URLSearchParams({ schema: input.field('schema') || 'public' })
  if (view !== 'list') query.set('table', input.field('table'))
  if (view === 'structure') query.set('view', 'structure')
  for (const [name, value] of input.form) if (name.startsWith('k.')) query.set(name, value)
  return query
}

function columnsShown(input: FormInput): number {
  return Math.min(Math.max(Number(input.field('columns_shown')) || NEW_TABLE_COLUMNS, 1), MAX_COLUMNS)
}

async function create(context: DashboardContext, input: FormInput): Promise<Saved> {
  const ref = input.params.ref!
  const schema = input.field('schema') || 'public'
  const columns: unknown[] = []
  const rows: number[] = []
  for (let i = 0; i < columnsShown(input); i++) {
    const f = (name: string) => input.field(`columns.${i}.${name}`)
    if (f('name').trim() === '' && f('type').trim() === '') continue
    // The operation's fields are the column's place in the list it gets; the form's inputs keep their row's number.
    rows.push(i)
    columns.push({
      name: f('name').trim(),
      type: f('type').trim(),
      default: f('default').trim() || undefined,
      primary_key: f('primary_key') === 'on',
      identity: f('identity') === 'on',
      nullable: f('nullable') === 'on',
      unique: f('unique') === 'on',
      references: referenceOf(f('references'), `columns.${i}.references`),
    })
  }
  try {
    await createTable(context.controlPlane, ref, { schema, name: input.field('name').trim(), rls: input.field('rls') === 'on', columns })
  } catch (error) {
    throw renumbered(error, rows)
  }
  const name = input.field('name').trim()
  return { to: tablesPath(ref, schema, name, { view: 'structure' }), notice: 'table_created', values: [name] }
}

/** A refusal's `columns.N.*` field renamed to the form's row of that column. */
function renumbered(error: unknown, rows: number[]): unknown {
  const rename = (one: { field: string | undefined }) => {
    const match = one.field === undefined ? null : /^columns\.(\d+)\.(.*)$/.exec(one.field)
    if (match) one.field = `columns.${rows[Number(match[1])] ?? match[1]}.${match[2]!.split('.')[0]}`
  }
  const typed = error as { field: string | undefined; errors?: Array<{ field: string | undefined }> }
  if (typed && typeof typed === 'object') {
    if (Array.isArray(typed.errors)) typed.errors.forEach(rename)
    rename(typed)
  }
  return error
}

/** The values a row's form sends: a typed value, NULL where its box is ticked; an empty input is left out on insert (the default applies). */
function rowValuesOf(input: FormInput, insert: boolean): Record<string, string | null> {
  const values: Record<string, string | null> = {}
  for (const [name, value] of input.form) {
    if (!name.startsWith('v.')) continue
    const column = name.slice(2)
    if (input.form.get(`n.${column}`) === 'on') values[column] = null
    else if (value !== '' || !insert) values[column] = value
  }
  return values
}

function keyOf(input: FormInput): Record<string, string> {
  const key: Record<string, string> = {}
  for (const [name, value] of input.form) if (name.startsWith('k.')) key[name.slice(2)] = value
  return key
}

/** A form whose inputs are the table's columns (`v.<column>`, `n.<column>`): its spec made per request, so each column's error stands beside it. */
function rowForm(context: DashboardContext, form: string, run: (input: FormInput) => Promise<Saved>): (input: FormInput) => Promise<FormAnswer> {
  return (input) => {
    const columns = [...input.form.keys()].filter((name) => name.startsWith('v.')).map((name) => name.slice(2))
    const spec: FormSpec = {
      form,
      fields: [...columns.map((c) => `v.${c}`), ...columns.map((c) => `n.${c}`)],
      names: Object.fromEntries(columns.map((c) => [c, `v.${c}`])),
      run,
      screen: (i, state) => tablesScreen(context, i.params.ref!, i.caller, queryOf(i, 'rows'), state),
    }
    return refusable(spec)(input)
  }
}

const rowsTo = (input: FormInput) => tablesPath(input.params.ref!, input.field('schema'), input.field('table'))
const structureTo = (input: FormInput) => tablesPath(input.params.ref!, input.field('schema'), input.field('table'), { view: 'structure' })
const noticeName = (input: FormInput) => [input.field('table')]

export function tablesForms(context: DashboardContext): FormsPart {
  const cp = context.controlPlane
  const structure = (input: FormInput, state: FormState) => tablesScreen(context, input.params.ref!, input.caller, queryOf(input, 'structure'), state)
  const rows = (input: FormInput, state: FormState) => tablesScreen(context, input.params.ref!, input.caller, queryOf(input, 'rows'), state)
  const list = (input: FormInput, state: FormState) => tablesScreen(context, input.params.ref!, input.caller, queryOf(input, 'list'), state)
  const at = (input: FormInput) => [input.params.ref!, input.field('schema'), input.field('table')] as const
  const write = (form: DashboardForm): DashboardForm => ({ ...form, access: 'write' })
  const createFields = ['name', 'rls', 'columns_shown', ...Array.from({ length: MAX_COLUMNS }, (_, i) => COLUMN_FIELDS.map((f) => `columns.${i}.${f}`)).flat()]
  return {
    forms: [
      write(projectForm('/tables/create', refusable({ form: 'table_create', fields: createFields, run: (input) => create(context, input), screen: list }))),
      write(
        projectForm(
          '/tables/rows/insert',
          rowForm(context, 'row_insert', async (input) => {
            await insertRow(cp, ...at(input), rowValuesOf(input, true))
            return { to: rowsTo(input), notice: 'row_inserted', values: noticeName(input) }
          }),
        ),
      ),
      write(
        projectForm(
          '/tables/rows/update',
          rowForm(context, 'row_update', async (input) => {
            await updateRow(cp, ...at(input), keyOf(input), rowValuesOf(input, false))
            return { to: rowsTo(input), notice: 'row_updated', values: noticeName(input) }
          }),
        ),
      ),
      write(
        projectForm(
          '/tables/rows/delete',
          refusable({
            form: 'row_delete',
            run: async (input) => {
              await deleteRow(cp, ...at(input), keyOf(input))
              return { to: rowsTo(input), notice: 'row_deleted', values: noticeName(input) }
            },
            screen: rows,
          }),
        ),
      ),
      write(
        projectForm(
          '/tables/rls',
          refusable({
            form: 'rls',
            run: async (input) => {
              const enabled = input.field('enabled') === 'on'
              await setRowLevelSecurity(cp, ...at(input), { enabled })
              return { to: structureTo(input), notice: enabled ? 'rls_on' : 'rls_off', values: noticeName(input) }
            },
            screen: structure,
          }),
        ),
      ),
      write(
        projectForm(
          '/tables/policies',
          refusable({
            form: 'policy_add',
            fields: ['template', 'column', 'name'],
            run: async (input) => {
              await addPolicy(cp, ...at(input), { template: input.field('template'), column: input.field('column') || undefined, name: input.field('name').trim() || undefined })
              return { to: structureTo(input), notice: 'policy_added', values: noticeName(input) }
            },
            screen: structure,
          }),
        ),
      ),
      write(
        projectForm(
          '/tables/policies/drop',
          refusable({
            form: 'policy_drop',
            run: async (input) => {
              await dropPolicy(cp, ...at(input), input.field('policy'))
              return { to: structureTo(input), notice: 'policy_dropped', values: noticeName(input) }
            },
            screen: structure,
          }),
        ),
      ),
      write(
        projectForm(
          '/tables/columns/add',
          refusable({
            form: 'column_add',
            fields: ['name', 'type', 'default', 'references', 'nullable', 'unique'],
            names: {
              'actions.0.column.name': 'name',
              'actions.0.column.type': 'type',
              'actions.0.column.default': 'default',
              'actions.0.column.references': 'references',
              'actions.0.column.references.table': 'references',
              'actions.0.column.references.column': 'references',
              'actions.0.column.references.schema': 'references',
            },
            run: async (input) => {
              const column = {
                name: input.field('name').trim(),
                type: input.field('type').trim(),
                default: input.field('default').trim() || undefined,
                nullable: input.field('nullable') === 'on',
                unique: input.field('unique') === 'on',
                references: referenceOf(input.field('references'), 'references'),
              }
              await alterTable(cp, ...at(input), { actions: [{ action: 'add_column', column }] })
              return { to: structureTo(input), notice: 'column_added', values: [column.name] }
            },
            screen: structure,
          }),
        ),
      ),
      write(projectForm('/tables/columns/change', (input) => changeColumn(context, input, structure))),
      write(
        projectForm(
          '/tables/columns/drop',
          refusable({
            form: 'column_drop',
            fields: ['column'],
            names: { 'actions.0.name': 'column' },
            run: async (input) => {
              await alterTable(cp, ...at(input), { actions: [{ action: 'drop_column', name: input.field('column') }] })
              return { to: structureTo(input), notice: 'column_dropped', values: [input.field('column')] }
            },
            screen: structure,
          }),
        ),
      ),
      write(
        projectForm(
          '/tables/foreign-keys/add',
          refusable({
            form: 'fk_add',
            fields: ['column', 'references', 'on_delete'],
            names: { 'actions.0.columns.0': 'column', 'actions.0.references': 'references', 'actions.0.references.table': 'references', 'actions.0.references.schema': 'references', 'actions.0.references.columns.0': 'references' },
            run: async (input) => {
              const reference = referenceOf(input.field('references'), 'references')
              if (!reference) throw platformErrors.invalidArgument('references: name the column to reference, table.column', 'references')
              await alterTable(cp, ...at(input), {
                actions: [{ action: 'add_foreign_key', columns: [input.field('column')], references: { schema: reference.schema, table: reference.table, columns: [reference.column], on_delete: input.field('on_delete') } }],
              })
              return { to: structureTo(input), notice: 'fk_added', values: noticeName(input) }
            },
            screen: structure,
          }),
        ),
      ),
      write(
        projectForm(
          '/tables/constraints/drop',
          refusable({
            form: 'constraint_drop',
            run: async (input) => {
              await alterTable(cp, ...at(input), { actions: [{ action: 'drop_constraint', name: input.field('name') }] })
              return { to: structureTo(input), notice: 'constraint_dropped', values: noticeName(input) }
            },
            screen: structure,
          }),
        ),
      ),
      write(
        projectForm(
          '/tables/drop',
          refusable({
            form: 'table_drop',
            fields: ['confirm'],
            run: async (input) => {
              await dropTable(cp, ...at(input), input.field('confirm'))
              return { to: tablesPath(input.params.ref!, input.field('schema')), notice: 'table_dropped', values: noticeName(input) }
            },
            screen: structure,
          }),
        ),
      ),
    ],
    notices: {
      table_created: ([name]) => `Table ${name ?? ''} created.`,
      table_dropped: ([name]) => `Table ${name ?? ''} dropped.`,
      row_inserted: () => 'Row inserted.',
      row_updated: () => 'Row saved.',
      row_deleted: () => 'Row deleted.',
      rls_on: () => 'Row-level security is on: the API roles see only the rows a policy lets them.',
      rls_off: () => 'Row-level security is off: the grants alone decide.',
      policy_added: () => 'Policy added.',
      policy_dropped: () => 'Policy dropped.',
      column_added: ([name]) => `Column ${name ?? ''} added.`,
      column_changed: ([name]) => `Column ${name ?? ''} changed.`,
      column_dropped: ([name]) => `Column ${name ?? ''} dropped.`,
      fk_added: () => 'Foreign key added.',
      constraint_dropped: () => 'Constraint dropped.',
    },
  }
}

/** The column's changes as actions in one transaction (type, default, nullability, then the rename), each action's refusal beside its input. */
async function changeColumn(context: DashboardContext, input: FormInput, screen: FormSpec['screen']): Promise<FormAnswer> {
  const column = input.field('column')
  const actions: Array<Record<string, unknown>> = []
  const names: Record<string, string> = {}
  const push = (action: Record<string, unknown>, field: string, inputName: string) => {
    names[`actions.${actions.length}.${field}`] = inputName
    names[`actions.${actions.length}.name`] = 'column'
    actions.push(action)
  }
  if (input.field('type').trim() !== '') push({ action: 'set_type', name: column, type: input.field('type').trim() }, 'type', 'type')
  if (input.field('drop_default') === 'on') push({ action: 'set_default', name: column, default: null }, 'default', 'default')
  else if (input.field('default').trim() !== '') push({ action: 'set_default', name: column, default: input.field('default').trim() }, 'default', 'default')
  if (input.field('nullable') !== '') push({ action: 'set_nullable', name: column, nullable: input.field('nullable') === 'yes' }, 'nullable', 'nullable')
  const rename = input.field('rename').trim()
  if (rename !== '') push({ action: 'rename_column', name: column, to: rename }, 'to', 'rename')
  return refusable({
    form: 'column_change',
    fields: ['column', 'rename', 'type', 'default', 'drop_default', 'nullable'],
    names,
    run: async (i) => {
      if (actions.length === 0) throw platformErrors.invalidArgument('Nothing to change: give a new name, type, default or nullability')
      await alterTable(context.controlPlane, i.params.ref!, i.field('schema'), i.field('table'), { actions })
      return { to: tablesPath(i.params.ref!, i.field('schema'), i.field('table'), { view: 'structure' }), notice: 'column_changed', values: [rename || column] }
    },
    screen,
  })(input)
}
