// Quoting of identifiers and text for SQL built as text: every identifier goes
// through pg's escapeIdentifier, every literal through escapeLiteral (which
// doubles quotes and switches to E'' strings for backslashes). In lib/ so that
// each concern building SQL over a project's tables quotes the same way.
import { escapeIdentifier, escapeLiteral } from 'pg'

export const ident = escapeIdentifier

/** A text literal (`'it''s'`). */
export const quoteText = escapeLiteral

/** `"schema"."name"`. */
export function qualified(schema: string, name: string): string {
  return `${escapeIdentifier(schema)}.${escapeIdentifier(name)}`
}

/**
 * The whole row of the FROM item `alias` (a row of `table`). A bare alias is
 * not safe: PostgreSQL reads a plain name as a column first, so a table with
 * a column of that name would give the column instead (and `.count` of a
 * number is count(number), 1). `alias.*` names the row, but expands to the
 * columns at the top of a select or returning list; cast to the row's own
 * type it is the row everywhere, and a cast to the same type is no step.
 */
export function wholeRow(alias: string, table: { schema: string; name: string }): string {
  return `${alias}.*::${qualified(table.schema, table.name)}`
}

/** The text PostgreSQL reads a scalar from: strings as they are, other values as JSON. */
export function scalarText(value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value)
  return JSON.stringify(value)
}

function arrayElement(value: unknown): string {
  if (value === null || value === undefined) return 'NULL'
  return `"${scalarText(value).replace(/[\\"]/g, (ch) => `\\${ch}`)}"`
}

/** A PostgreSQL array literal (text form) of JS values. */
export function arrayText(values: readonly unknown[]): string {
  return `{${values.map(arrayElement).join(',')}}`
}
