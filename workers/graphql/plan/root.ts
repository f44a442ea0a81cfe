// The root fields of Query and Mutation: which generated field a name is
// (collection, by-key lookup, node, function, insert/update/delete) and the
// SQL that answers it.
import type { GraphQLObjectType } from 'graphql'
import { graphqlErrors } from '../errors.ts'
import type { FunctionModel, Model, TableModel } from '../model/index.ts'
import { ident, literal, qualified } from '../sql.ts'
import { argumentsOf, nextAlias, subSelections, type CollectedField, type PlanContext } from './context.ts'
import { itemSql, decodeNodeId } from './cursor.ts'
import { deleteSql, insertSql, updateSql, type MutationStatement } from './mutation.ts'
import { connectionSql } from './connection.ts'
import { functionCallSql, functionResultSql, singleRowSql } from './select.ts'

type RootField =
  | { kind: 'collection' | 'byPk' | 'insert' | 'update' | 'delete'; table: TableModel }
  | { kind: 'function'; fn: FunctionModel }

const indexes = new WeakMap<Model, { query: Map<string, RootField>; mutation: Map<string, RootField> }>()

function rootIndex(model: Model) {
  let index = indexes.get(model)
  if (!index) {
    const query = new Map<string, RootField>()
    const mutation = new Map<string, RootField>()
    for (const table of model.tables) {
      // As in the schema: with validation off, a `root: false` table's fields are still unknown.
      if (table.root) {
        query.set(`${table.fieldBase}Collection`, { kind: 'collection', table })
        query.set(`${table.fieldBase}ByPk`, { kind: 'byPk', table })
      }
      mutation.set(`insertInto${table.typeName}Collection`, { kind: 'insert', table })
      mutation.set(`update${table.typeName}Collection`, { kind: 'update', table })
      mutation.set(`deleteFrom${table.typeName}Collection`, { kind: 'delete', table })
    }
    for (const fn of model.queryFunctions) if (!query.has(fn.field)) query.set(fn.field, { kind: 'function', fn })
    for (const fn of model.mutationFunctions) if (!mutation.has(fn.field)) mutation.set(fn.field, { kind: 'function', fn })
    index = { query, mutation }
    indexes.set(model, index)
  }
  return index
}

function callSql(ctx: PlanContext, fn: FunctionModel, args: Record<string, unknown>, field: CollectedField): string {
  return functionCallSql(ctx, fn, [], args, field)
}

function nodeSql(ctx: PlanContext, args: Record<string, unknown>, field: CollectedField): string {
  const decoded = decodeNodeId(args.nodeId)
  const table = ctx.model.tableBySqlName.get(`${decoded.schema}\0${decoded.table}`)
  if (!table) return 'null::json'
  if (decoded.items.length !== table.primaryKey.length + 2) throw graphqlErrors.badNodeId(6)
  const a = nextAlias(ctx, 'a')
  const where = table.primaryKey.map((c, i) => `${a}.${ident(c.name)} = ${itemSql(ctx.values, decoded, i + 2, c.type.sqlType)}`).join(' and ')
  return singleRowSql(ctx, table, a, `from ${qualified(table.schema, table.name)} ${a} where ${where}`, subSelections(field))
}

/** SQL (a JSON expression) answering one root field of Query. */
export function queryFieldSql(ctx: PlanContext, type: GraphQLObjectType, field: CollectedField): string {
  const args = argumentsOf(ctx, type, field)
  if (field.name === 'node') return nodeSql(ctx, args, field)
  const root = rootIndex(ctx.model).query.get(field.name)
  if (!root) throw graphqlErrors.unknownField(field.name, 'Query')
  if (root.kind === 'function') return functionResultSql(ctx, type, root.fn, callSql(ctx, root.fn, args, field), field)
  const table = root.table
  const source = qualified(table.schema, table.name)
  if (root.kind === 'collection') return connectionSql(ctx, table, source, () => undefined, args, field)
  const missing = table.primaryKey.filter((c) => args[c.field] === undefined || args[c.field] === null)
  if (missing.length > 0) throw graphqlErrors.missingPrimaryKey(missing.map((c) => c.field))
  const a = nextAlias(ctx, 'a')
  const where = table.primaryKey.map((c) => `${a}.${ident(c.name)} = ${literal(ctx.values, args[c.field], c.type)}`).join(' and ')
  return singleRowSql(ctx, table, a, `from ${source} ${a} where ${where}`, subSelections(field))
}

/** The statement answering one root field of Mutation. */
export function mutationFieldSql(ctx: PlanContext, type: GraphQLObjectType, field: CollectedField): MutationStatement {
  const args = argumentsOf(ctx, type, field)
  const root = rootIndex(ctx.model).mutation.get(field.name)
  if (!root) throw graphqlErrors.unknownField(field.name, 'Mutation')
  if (root.kind === 'function') {
    // As JSON, so a scalar result is written as PostgreSQL writes it in a query's
    // JSON (a date stays "2023-07-29"), never parsed by the driver into a JS value.
    return { sql: `select 0 as n, to_json(${functionResultSql(ctx, type, root.fn, callSql(ctx, root.fn, args, field), field)}) as data` }
  }
  if (root.kind === 'insert') return insertSql(ctx, root.table, args, field)
  if (root.kind === 'update') return updateSql(ctx, root.table, args, field)
  return deleteSql(ctx, root.table, args, field)
}
