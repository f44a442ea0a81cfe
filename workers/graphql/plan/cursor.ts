// Cursors and nodeIds: base64 of a jsonb array text (pg_graphql's encoding),
// decoded here only far enough to know their length and which items are
// null; the values themselves are read back in SQL (`->> i`), so bigint and
// numeric keep every digit. keysetSql turns a decoded cursor into the
// condition for the rows after it.
import { graphqlErrors } from '../errors.ts'
import type { SqlValues } from '../sql.ts'
import { FLIP } from './directions.ts'
import type { OrderItem } from './order.ts'

export interface DecodedArray {
  /** The jsonb text, for SQL. */
  json: string
  items: unknown[]
}

function decode(encoded: string): { json: string; items: unknown[] } | number {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 === 1) return 1
  const json = Buffer.from(encoded, 'base64').toString('utf8')
  let items: unknown
  try {
    items = JSON.parse(json)
  } catch {
    return 2
  }
  if (!Array.isArray(items)) return 3
  return { json, items }
}

export function decodeCursor(encoded: string): DecodedArray {
  const decoded = decode(encoded)
  if (typeof decoded === 'number') throw graphqlErrors.badCursor(decoded)
  return decoded
}

export interface DecodedNodeId extends DecodedArray {
  schema: string
  table: string
}

export function decodeNodeId(encoded: unknown): DecodedNodeId {
  if (typeof encoded !== 'string') throw graphqlErrors.badNodeId(1)
  const decoded = decode(encoded)
  if (typeof decoded === 'number') throw graphqlErrors.badNodeId(decoded + 1)
  const [schema, table] = decoded.items
  if (typeof schema !== 'string' || typeof table !== 'string' || decoded.items.length < 3) throw graphqlErrors.badNodeId(5)
  return { ...decoded, schema, table }
}

/** SQL reading item `index` of a decoded array, cast to `sqlType`. */
export function itemSql(values: SqlValues, decoded: DecodedArray, index: number, sqlType: string): string {
  return `((${values.add(decoded.json, 'jsonb')} ->> ${index})::${sqlType})`
}

/**
 * Rows strictly after the cursor in `items` order (strictly before with
 * `reverse`). Never null. A cursor shorter than the order compares its
 * leading columns only, as pg_graphql's does.
 */
export function keysetSql(values: SqlValues, alias: string, items: OrderItem[], cursor: DecodedArray, reverse: boolean): string {
  const disjuncts: string[] = []
  // A domain-typed column is compared as its base type, as filters compare it:
  // PostgreSQL finds no `<` or `=` for a domain over an enum.
  const comparable = (item: OrderItem) => (item.column?.type.domain ? `(${item.value(alias)})::${item.sqlType}` : item.value(alias))
  items.slice(0, cursor.items.length).forEach((item, i) => {
    const col = comparable(item)
    const value = (k: number) => itemSql(values, cursor, k, items[k]!.sqlType)
    const equal = items.slice(0, i).map((prev, k) => (cursor.items[k] === null ? `${comparable(prev)} is null` : `${comparable(prev)} = ${value(k)}`))
    const d = reverse ? FLIP[item.direction] : item.direction
    const nullsFirst = d.endsWith('First')
    let after: string
    if (cursor.items[i] === null) {
      if (!nullsFirst) return
      after = `${col} is not null`
    } else {
      const cmp = `${col} ${d.startsWith('Asc') ? '>' : '<'} ${value(i)}`
      after = nullsFirst ? cmp : `(${cmp} or ${col} is null)`
    }
    disjuncts.push([...equal, after].join(' and '))
  })
  return disjuncts.length === 0 ? 'false' : `coalesce((${disjuncts.map((d) => `(${d})`).join(' or ')}), false)`
}
