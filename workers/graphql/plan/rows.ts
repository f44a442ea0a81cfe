// How the planner reads a row: by column or whole, the columns a row's
// subquery selects, and the small helpers every part of a plan shares. Apart
// from select.ts, so the parts that select.ts and connection.ts build for each
// other (records inside connections inside records) need not import each other.
import type { GraphQLObjectType } from 'graphql'
import { graphqlErrors } from '../errors.ts'
import type { TableModel } from '../model/index.ts'
import { ident, wholeRow } from '../sql.ts'
import type { CollectedField, PlanContext } from './context.ts'

/** How SQL reads one row: its columns by name, and the whole row (the argument of a computed field). */
export interface RowRef {
  column(name: string): string
  /** Present when the row is read whole, as every row of a table with computed fields is (rowColumns). */
  whole?: string
}

/** A row that is a composite value, or a table alias (with its `whole`, sql.ts wholeRow): `row."column"`. */
export function rowRef(row: string, whole = row): RowRef {
  return { column: (name) => `${row}.${ident(name)}`, whole }
}

export function objectType(ctx: PlanContext, name: string): GraphQLObjectType {
  return ctx.schema.getType(name) as GraphQLObjectType
}

export function unknown(field: CollectedField, typeName: string): never {
  throw graphqlErrors.unknownField(field.name, typeName)
}

/** `from` followed by the joins records added. */
export function withJoins(from: string, joins: readonly string[]): string {
  return joins.length === 0 ? from : `${from} ${joins.join(' ')}`
}

/**
 * What a subquery over `table` (aliased `alias`, the row itself being
 * `whole`) selects, and how the outer query reads its rows. Plain columns
 * when the table has no computed fields (a whole-row composite costs
 * PostgreSQL a tuple built and taken apart again for every field read),
 * named by position so that the subquery's own columns beside them (`n`,
 * `e`) cannot meet a table column of that name. A computed field takes the
 * row itself, as `r`.
 */
export function rowColumns(table: TableModel, alias: string, whole = wholeRow(alias, table)): { select: string; rowOf: (outer: string) => RowRef } {
  if (table.computed.length > 0 || table.readColumns.length === 0) {
    return { select: `${whole} as r`, rowOf: (outer) => rowRef(`(${outer}.r)`) }
  }
  // A relation's own columns are read too: a foreign key column need not be a field.
  const names = new Set([...table.readColumns.map((c) => c.name), ...table.relations.flatMap((r) => r.columns)])
  const position = new Map([...names].map((name, i) => [name, `c${i + 1}`]))
  return {
    select: [...position].map(([name, as]) => `${alias}.${ident(name)} as ${as}`).join(', '),
    rowOf: (outer) => ({ column: (name) => `${outer}.${position.get(name)!}` }),
  }
}
