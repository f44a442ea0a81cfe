// insertInto/update/deleteFrom<Table>Collection as one data-modifying
// statement each, returning the touched rows. `atMost` is checked on the
// count the statement reports; exceeding it fails the request, and the
// request's savepoint undoes the write (SPEC 4.2 rule 2).
import { graphqlErrors, type GraphqlError } from '../errors.ts'
import type { TableModel } from '../model/index.ts'
import { ident, jsonObject, literal, qualified, text, wholeRow } from '../sql.ts'
import { collectFields, nextAlias, subSelections, type CollectedField, type PlanContext } from './context.ts'
import { filterSql } from './filter.ts'
import { withJoins } from './rows.ts'
import { recordSql } from './select.ts'

export interface MutationStatement {
  /** Returns one row: `n` (rows touched) and `data` (the field's JSON). */
  sql: string
  atMost?: number
  tooMany?: () => GraphqlError
}

function responseSql(ctx: PlanContext, table: TableModel, kind: string, field: CollectedField): string {
  const typeName = `${table.typeName}${kind}Response`
  const x = nextAlias(ctx, 'x')
  const pairs: [string, string][] = collectFields(ctx, typeName, subSelections(field)).map((f) => {
    if (f.name === '__typename') return [f.key, text(typeName)]
    if (f.name === 'affectedCount') return [f.key, '(select count(*) from affected)::int']
    if (f.name === 'records') {
      const joins: string[] = []
      const record = recordSql(ctx, table, `(${x}.r)`, subSelections(f), joins)
      return [f.key, `coalesce((select json_agg(${record}) ${withJoins(`from affected ${x}`, joins)}), '[]'::json)`]
    }
    throw graphqlErrors.unknownField(f.name, typeName)
  })
  return `select (select count(*) from affected)::int as n, ${jsonObject(pairs)} as data`
}

export function insertSql(ctx: PlanContext, table: TableModel, args: Record<string, unknown>, field: CollectedField): MutationStatement {
  const objects = (args.objects as Record<string, unknown>[] | undefined) ?? []
  if (objects.length === 0) throw graphqlErrors.noObjects()
  const insertable = table.columns.filter((c) => c.insertable)
  const used = insertable.filter((c) => objects.some((o) => Object.hasOwn(o, c.field)))
  const columns = used.length > 0 ? used : insertable.slice(0, 1)
  for (const o of objects) {
    for (const key of Object.keys(o)) {
      if (!insertable.some((c) => c.field === key)) throw graphqlErrors.invalidInput(`${table.typeName}InsertInput`)
    }
  }
  const rows = objects.map((o) => `(${columns.map((c) => (Object.hasOwn(o, c.field) ? literal(ctx.values, o[c.field], c.type) : 'default')).join(', ')})`)
  const a = nextAlias(ctx, 'a')
  const sql =
    `with affected as (insert into ${qualified(table.schema, table.name)} as ${a} (${columns.map((c) => ident(c.name)).join(', ')}) ` +
    `values ${rows.join(', ')}${onConflictSql(ctx, table, a, args.onConflict)} returning ${wholeRow(a, table)} as r) ${responseSql(ctx, table, 'Insert', field)}`
  return { sql }
}

/**
 * The `on conflict` clause of an upsert ('' without `onConflict`). Without
 * update fields a conflicting row is left as it is (`do nothing`): it is not
 * returned, so `affectedCount` and `records` are the inserted rows only; with
 * them they are the inserted and the updated rows, and an existing row the
 * filter rejects is neither changed nor returned. Each update field takes the
 * value the insert would have written (its default when no object gives it).
 */
function onConflictSql(ctx: PlanContext, table: TableModel, alias: string, onConflict: unknown): string {
  if (onConflict === undefined || onConflict === null) return ''
  const input = `${table.typeName}OnConflict`
  if (!table.features.has('upsert') || typeof onConflict !== 'object') throw graphqlErrors.invalidInput(input)
  const { constraint, updateFields, filter } = onConflict as Record<string, unknown>
  if (typeof constraint !== 'string' || !table.conflictConstraints.includes(constraint)) throw graphqlErrors.invalidInput(input)
  const target = ` on conflict on constraint ${ident(constraint)}`
  const names = new Set(Array.isArray(updateFields) ? (updateFields as unknown[]) : [])
  const set = [...names].map((name) => {
    const column = typeof name === 'string' ? table.columnByField.get(name) : undefined
    if (!column?.updatable || !table.canUpdate) throw graphqlErrors.invalidInput(input)
    return `${ident(column.name)} = excluded.${ident(column.name)}`
  })
  const filtered = filter !== undefined && filter !== null
  if (set.length === 0) {
    if (filtered) throw graphqlErrors.upsertFilterWithoutUpdate()
    return `${target} do nothing`
  }
  return `${target} do update set ${set.join(', ')}${filtered ? ` where ${filterSql(ctx.values, table, alias, filter)}` : ''}`
}

export function updateSql(ctx: PlanContext, table: TableModel, args: Record<string, unknown>, field: CollectedField): MutationStatement {
  const set = (args.set as Record<string, unknown> | undefined) ?? {}
  const assignments = Object.entries(set).map(([key, value]) => {
    const column = table.columns.find((c) => c.field === key && c.updatable)
    if (!column) throw graphqlErrors.invalidInput(`${table.typeName}UpdateInput`)
    return `${ident(column.name)} = ${literal(ctx.values, value, column.type)}`
  })
  if (assignments.length === 0) throw graphqlErrors.emptySet()
  const a = nextAlias(ctx, 'a')
  const sql =
    `with affected as (update ${qualified(table.schema, table.name)} as ${a} set ${assignments.join(', ')} ` +
    `where ${filterSql(ctx.values, table, a, args.filter)} returning ${wholeRow(a, table)} as r) ${responseSql(ctx, table, 'Update', field)}`
  return { sql, atMost: args.atMost as number, tooMany: graphqlErrors.updateTooMany }
}

export function deleteSql(ctx: PlanContext, table: TableModel, args: Record<string, unknown>, field: CollectedField): MutationStatement {
  const a = nextAlias(ctx, 'a')
  const sql =
    `with affected as (delete from ${qualified(table.schema, table.name)} as ${a} ` +
    `where ${filterSql(ctx.values, table, a, args.filter)} returning ${wholeRow(a, table)} as r) ${responseSql(ctx, table, 'Delete', field)}`
  return { sql, atMost: args.atMost as number, tooMany: graphqlErrors.deleteTooMany }
}

