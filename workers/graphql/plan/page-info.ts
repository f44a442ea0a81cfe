// A connection's `pageInfo` (hasNextPage, hasPreviousPage, startCursor,
// endCursor) as pg_graphql answers it, over the page subquery.
import { graphqlErrors } from '../errors.ts'
import { jsonObject } from '../sql.ts'
import { collectFields, subSelections, type CollectedField, type PlanContext } from './context.ts'

/** One connection's page, as the SQL of its fields sees it. */
export interface Page {
  backward: boolean
  limit: number
  offset: number
  /** The rows strictly after the cursor, in the page's direction, when there is a cursor. */
  keyset: string | undefined
  /** Whether a row of the filtered set meets `condition` (SQL over the base alias). */
  exists: (condition: string) => string
  /** The page subquery's row number and how rows are told to be in the page. */
  n: string
  inPage: string
  cursorOf: () => string
}

/**
 * pageInfo as pg_graphql answers it. Ahead (in the page's direction) there
 * is more when the rows after the cursor outnumber offset + limit: the page
 * subquery reads one row more than that. Behind, there is more when the
 * set's first row (its last, paging backwards) is not on the page: with no
 * offset and room for a row, that is when a row is at or before the cursor;
 * an offset or `first: 0` also leaves rows after the cursor off the page.
 */
export function pageInfoSql(ctx: PlanContext, page: Page, field: CollectedField): string {
  const more = `count(*) > ${page.offset + page.limit}`
  const atOrBeforeCursor = page.keyset ? page.exists(`not ${page.keyset}`) : undefined
  const skipsRows = page.offset > 0 || page.limit === 0
  const behind = !skipsRows
    ? (atOrBeforeCursor ?? 'false')
    : atOrBeforeCursor
      ? `(count(*) > 0 or ${atOrBeforeCursor})`
      : 'count(*) > 0'
  const next = page.backward ? behind : more
  const previous = page.backward ? more : behind
  const cursorAt = (fromEnd: boolean) =>
    `(array_agg(${page.cursorOf()} order by ${page.n}${fromEnd !== page.backward ? ' desc' : ''}) filter (where ${page.inPage}))[1]`
  const pairs: [string, string][] = collectFields(ctx, 'PageInfo', subSelections(field)).map((e) => {
    if (e.name === '__typename') return [e.key, `'PageInfo'`]
    if (e.name === 'hasNextPage') return [e.key, next]
    if (e.name === 'hasPreviousPage') return [e.key, previous]
    if (e.name === 'startCursor') return [e.key, cursorAt(false)]
    if (e.name === 'endCursor') return [e.key, cursorAt(true)]
    throw graphqlErrors.unknownPageInfoField()
  })
  return jsonObject(pairs)
}
