// Relations: foreign keys between served tables (and views' `foreign_keys`
// directives), as a to-one field on the referencing side and a collection
// (or a single row, when the key is unique) on the referenced side.
import { relationFieldName } from '../../../lib/pg-catalog/names.ts'
import { foreignKeyEdgesOf, isUniqueKey, sameColumns } from '../../../lib/pg-catalog/relationships.ts'
import { foreignKeysOf, optionalString, parseDirective } from '../directives.ts'
import type { FieldNames } from './field-names.ts'
import type { PendingTable } from './settings.ts'

/** A relation between two tables: a foreign key, or a view's `foreign_keys` directive. */
export interface Link {
  /** A foreign key constraint (not a view's `foreign_keys` directive). */
  real: boolean
  local: PendingTable
  columns: string[]
  foreign: PendingTable
  foreignColumns: string[]
  localName: string | undefined
  foreignName: string | undefined
}

/** Real foreign keys, then the `foreign_keys` directives of views, between tables in the model. */
export function linksOf(pending: PendingTable[]): Link[] {
  const byOid = new Map(pending.map((p) => [p.catalog.oid, p]))
  const catalogByOid = new Map(pending.map((p) => [p.catalog.oid, p.catalog]))
  const bySqlName = new Map(pending.map((p) => [`${p.catalog.schema}\0${p.catalog.name}`, p]))
  const links: Link[] = []
  for (const p of pending) {
    for (const { fk, refTable } of foreignKeyEdgesOf(p.catalog, catalogByOid)) {
      const foreign = byOid.get(refTable.oid)!
      const d = parseDirective(fk.comment)
      links.push({
        real: true, local: p, columns: fk.columns, foreign, foreignColumns: fk.refColumns,
        localName: optionalString(d, 'local_name'), foreignName: optionalString(d, 'foreign_name'),
      })
    }
    for (const fk of foreignKeysOf(p.directive)) {
      const foreign = bySqlName.get(`${fk.foreignSchema}\0${fk.foreignTable}`)
      if (!foreign) continue
      links.push({
        real: false, local: p, columns: fk.localColumns, foreign, foreignColumns: fk.foreignColumns,
        localName: fk.localName, foreignName: fk.foreignName,
      })
    }
  }
  return links
}

/** Whether a link's columns are columns (fields) of its two tables, pairwise. */
function linkIsUsable(link: Link): boolean {
  const local = link.local.model
  const foreign = link.foreign.model
  return link.columns.length === link.foreignColumns.length &&
    link.columns.every((n) => local.columns.some((c) => c.name === n)) &&
    link.foreignColumns.every((n) => foreign.columns.some((c) => c.name === n))
}

/** The local side's field: the referenced row. */
export function relateReferenced(link: Link, fields: FieldNames): void {
  if (!linkIsUsable(link)) return
  const local = link.local.model
  const foreign = link.foreign.model
  const toOne = relationFieldName(foreign.typeName, link.columns, true, link.foreign.settings.inflect, link.foreignName)
  if (!fields.claim(local, toOne)) return
  const localCols = link.columns.map((n) => local.columns.find((c) => c.name === n)!)
  local.relations.push({
    field: toOne, kind: 'one', target: foreign, columns: link.columns, targetColumns: link.foreignColumns,
    nonNull: localCols.every((c) => c.notNull) && !link.foreign.catalog.rls && foreign.isTable && local.isTable,
    // A foreign key references a primary key or unique constraint.
    unique: link.real && foreign.isTable && local.isTable,
  })
}

/** The referenced side's field: the referencing rows, one row when the key is unique on the local side. */
export function relateReferencing(link: Link, fields: FieldNames): void {
  if (!linkIsUsable(link)) return
  const local = link.local.model
  const foreign = link.foreign.model
  const unique =
    isUniqueKey(link.local.catalog, link.columns) ||
    sameColumns(local.primaryKey.map((c) => c.name), link.columns)
  const back = relationFieldName(local.typeName, link.foreignColumns, unique, link.local.settings.inflect, link.localName)
  if (!fields.claim(foreign, back)) return
  foreign.relations.push({
    field: back, kind: unique ? 'one' : 'many', target: local, columns: link.foreignColumns, targetColumns: link.columns, nonNull: false,
    unique: unique && link.real && local.isTable,
  })
}
