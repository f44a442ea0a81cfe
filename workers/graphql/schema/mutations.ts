// Mutations: insert, update and delete fields of a table, their inputs and
// responses, and upsert's `onConflict`.
import {
  GraphQLEnumType, type GraphQLFieldConfigArgumentMap, type GraphQLFieldConfigMap, type GraphQLInputFieldConfigMap, GraphQLInputObjectType, GraphQLInt, GraphQLObjectType,
} from 'graphql'
import type { TableModel } from '../model/index.ts'
import { list, nn } from './common.ts'
import type { SchemaBuild } from './context.ts'
import { filterType } from './filters.ts'
import { nodeType } from './nodes.ts'
import { inputType } from './values.ts'

/**
 * The insert's `onConflict` argument when the table turns `upsert` on and
 * has a constraint to name. `updateFields` and `filter` exist only when the
 * role may update a column: without them the upsert can only leave rows be.
 */
export function onConflictArgs(b: SchemaBuild, table: TableModel): GraphQLFieldConfigArgumentMap {
  if (!table.features.has('upsert') || table.conflictConstraints.length === 0) return {}
  const constraint = new GraphQLEnumType({
    name: `${table.typeName}Constraint`,
    description: `A primary key or unique constraint of \`${table.typeName}\``,
    values: Object.fromEntries(table.conflictConstraints.map((n) => [n, { value: n }])),
  })
  const fields: GraphQLInputFieldConfigMap = {
    constraint: { type: nn(constraint), description: 'The constraint whose conflict turns the insert into an update' },
  }
  const updatable = table.columns.filter((c) => c.updatable && table.canUpdate && !['true', 'false', 'null'].includes(c.field))
  if (updatable.length > 0) {
    const field = new GraphQLEnumType({
      name: `${table.typeName}UpdateField`,
      description: `A field of \`${table.typeName}\` an upsert may update`,
      values: Object.fromEntries(updatable.map((c) => [c.field, { value: c.field }])),
    })
    fields.updateFields = {
      type: list(nn(field)),
      description: 'Fields of the existing record set from the inserted one; without them the existing record is left as it is',
    }
    fields.filter = { type: filterType(b, table), description: 'Restricts the update to existing records matching the criteria' }
  }
  const input = new GraphQLInputObjectType({ name: `${table.typeName}OnConflict`, fields })
  return { onConflict: { type: input, description: 'Updates or keeps the existing record where a new one conflicts with it' } }
}

export function mutationTypes(b: SchemaBuild, table: TableModel) {
  const node = nodeType(b, table)
  const response = (kind: string) =>
    new GraphQLObjectType({
      name: `${table.typeName}${kind}Response`,
      fields: {
        affectedCount: { type: nn(GraphQLInt), description: 'Count of the records impacted by the mutation' },
        records: { type: nn(list(nn(node))), description: 'Array of records impacted by the mutation' },
      },
    })
  const input = (kind: string, pick: (c: TableModel['columns'][number]) => boolean) =>
    new GraphQLInputObjectType({
      name: `${table.typeName}${kind}Input`,
      fields: Object.fromEntries(table.columns.filter(pick).map((c) => [c.field, { type: inputType(b, c.type) }])),
    })
  return {
    insertable: table.canInsert && table.columns.some((c) => c.insertable),
    updatable: table.canUpdate && table.columns.some((c) => c.updatable),
    deletable: table.canDelete,
    insertInput: () => input('Insert', (c) => c.insertable),
    updateInput: () => input('Update', (c) => c.updatable),
    response,
  }
}

const AT_MOST = 'The maximum number of records in the collection permitted to be affected'

/** A table's insert, update and delete fields, as the role's grants allow them, added to `mutation`. */
export function mutationFields(b: SchemaBuild, table: TableModel, mutation: GraphQLFieldConfigMap<unknown, unknown>): void {
  const m = mutationTypes(b, table)
  if (m.insertable) {
    mutation[`insertInto${table.typeName}Collection`] = {
      type: m.response('Insert'),
      args: { objects: { type: nn(list(nn(m.insertInput()))) }, ...onConflictArgs(b, table) },
      description: `Adds one or more \`${table.typeName}\` records to the collection`,
    }
  }
  if (m.updatable) {
    mutation[`update${table.typeName}Collection`] = {
      type: nn(m.response('Update')),
      args: {
        set: { type: nn(m.updateInput()), description: 'Fields that are set will be updated for all records matching the `filter`' },
        filter: { type: filterType(b, table), description: "Restricts the mutation's impact to records matching the criteria" },
        atMost: { type: nn(GraphQLInt), defaultValue: 1, description: AT_MOST },
      },
      description: `Updates zero or more records in the \`${table.typeName}\` collection`,
    }
  }
  if (m.deletable) {
    mutation[`deleteFrom${table.typeName}Collection`] = {
      type: nn(m.response('Delete')),
      args: {
        filter: { type: filterType(b, table), description: "Restricts the mutation's impact to records matching the criteria" },
        atMost: { type: nn(GraphQLInt), defaultValue: 1, description: AT_MOST },
      },
      description: `Deletes zero or more records from the \`${table.typeName}\` collection`,
    }
  }
}
