// Comment directives: `@graphql(<JSON>)` in a comment on a schema, table,
// view, column, function, foreign key constraint or enum (SPEC 2.4). Parsed
// as pg_graphql parses them: the greedy match of `@graphql\((.+)\)` across
// lines, then JSON. Invalid JSON fails every request with PostgreSQL's text;
// a value of the wrong JSON type fails with pg_graphql's loading message.
import { graphqlErrors } from './errors.ts'

const DIRECTIVE = /@graphql\((.+)\)/s

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
export type Directive = Record<string, Json>

/** The directive object of a comment; `{}` when the comment has none. */
export function parseDirective(comment: string | null | undefined): Directive {
  if (!comment) return {}
  const match = DIRECTIVE.exec(comment)
  if (!match) return {}
  let value: unknown
  try {
    value = JSON.parse(match[1]!)
  } catch {
    throw graphqlErrors.directiveJson()
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Directive) : {}
}

/** The comment's text without its directive: the GraphQL description. */
export function descriptionOf(comment: string | null | undefined, directive: Directive): string | undefined {
  const explicit = directive.description
  if (typeof explicit === 'string') return explicit
  if (!comment) return undefined
  const text = comment.replace(DIRECTIVE, '').trim()
  return text.length > 0 ? text : undefined
}

/** How serde (pg_graphql's deserializer) names an unexpected JSON value. */
function unexpected(value: Json): string {
  if (value === null) return 'unit value'
  if (typeof value === 'boolean') return `boolean \`${value}\``
  if (typeof value === 'string') return `string ${JSON.stringify(value)}`
  if (typeof value === 'number') return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``
  if (Array.isArray(value)) return 'sequence'
  return 'map'
}

export function optionalString(directive: Directive, key: string): string | undefined {
  const value = directive[key]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') throw graphqlErrors.directiveShape(`invalid type: ${unexpected(value)}, expected a string`)
  return value
}

export function optionalU64(directive: Directive, key: string): number | undefined {
  const value = directive[key]
  if (value === undefined || value === null) return undefined
  if (typeof value === 'number' && Number.isInteger(value)) {
    if (value < 0) throw graphqlErrors.directiveShape(`invalid value: ${unexpected(value)}, expected u64`)
    return value
  }
  throw graphqlErrors.directiveShape(`invalid type: ${unexpected(value)}, expected u64`)
}

export function optionalStringList(directive: Directive, key: string): string[] | undefined {
  const value = directive[key]
  if (value === undefined || value === null) return undefined
  if (!Array.isArray(value)) throw graphqlErrors.directiveShape(`invalid type: ${unexpected(value)}, expected a sequence`)
  for (const item of value) {
    if (typeof item !== 'string') throw graphqlErrors.directiveShape(`invalid type: ${unexpected(item)}, expected a string`)
  }
  return value as string[]
}

/** `{"<key>": {"enabled": true}}`: on only when `enabled` is JSON true. */
export function enabled(directive: Directive, key: string): boolean | undefined {
  const value = directive[key]
  if (value === undefined || value === null || typeof value !== 'object' || Array.isArray(value)) return undefined
  const flag = (value as Record<string, Json>).enabled
  return flag === undefined ? undefined : flag === true
}

export function isTrue(directive: Directive, key: string): boolean {
  return directive[key] === true
}

export interface DirectiveForeignKey {
  localName?: string
  localColumns: string[]
  foreignName?: string
  foreignSchema: string
  foreignTable: string
  foreignColumns: string[]
}

/** The `foreign_keys` list of a table or view comment. */
export function foreignKeysOf(directive: Directive): DirectiveForeignKey[] {
  const value = directive.foreign_keys
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) throw graphqlErrors.directiveShape(`invalid type: ${unexpected(value)}, expected a sequence`)
  return value.map((entry) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw graphqlErrors.directiveShape(`invalid type: ${unexpected(entry)}, expected struct ForeignKeyDirective`)
    }
    const local = optionalStringList(entry, 'local_columns')
    const foreign = optionalStringList(entry, 'foreign_columns')
    const foreignSchema = optionalString(entry, 'foreign_schema')
    const foreignTable = optionalString(entry, 'foreign_table')
    for (const [name, v] of [['local_columns', local], ['foreign_columns', foreign], ['foreign_schema', foreignSchema], ['foreign_table', foreignTable]] as const) {
      if (v === undefined) throw graphqlErrors.directiveShape(`missing field \`${name}\``)
    }
    return {
      localName: optionalString(entry, 'local_name'),
      localColumns: local!,
      foreignName: optionalString(entry, 'foreign_name'),
      foreignSchema: foreignSchema!,
      foreignTable: foreignTable!,
      foreignColumns: foreign!,
    }
  })
}

/** Enum `mappings`: database label → GraphQL value name. */
export function mappingsOf(directive: Directive): Map<string, string> {
  const value = directive.mappings
  const out = new Map<string, string>()
  if (value === undefined || value === null) return out
  if (typeof value !== 'object' || Array.isArray(value)) throw graphqlErrors.directiveShape(`invalid type: ${unexpected(value)}, expected a map`)
  for (const [db, gql] of Object.entries(value)) {
    if (typeof gql !== 'string') throw graphqlErrors.directiveShape(`invalid type: ${unexpected(gql)}, expected a string`)
    out.set(db, gql)
  }
  return out
}

/** `{"limits": {"fields": <int>, "rows": <int>}}` on a schema (SPEC 2.4). */
export interface DocumentLimits {
  fields: number | undefined
  rows: number | undefined
}

export function limitsOf(directive: Directive): DocumentLimits | undefined {
  const value = directive.limits
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'object' || Array.isArray(value)) throw graphqlErrors.directiveShape(`invalid type: ${unexpected(value)}, expected struct Limits`)
  return { fields: optionalU64(value, 'fields'), rows: optionalU64(value, 'rows') }
}

/** `{"allowlist": {"table": "<schema.table>", "roles": [...]}}` on a schema (SPEC 2.4). */
export interface Allowlist {
  schema: string
  table: string
  /** The roles held to the list; anon and authenticated unless listed. */
  roles: string[]
}

export function allowlistOf(directive: Directive, defaultSchema: string): Allowlist | undefined {
  const value = directive.allowlist
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'object' || Array.isArray(value)) throw graphqlErrors.directiveShape(`invalid type: ${unexpected(value)}, expected struct Allowlist`)
  const table = optionalString(value, 'table')
  if (table === undefined) throw graphqlErrors.directiveShape('missing field `table`')
  const dot = table.indexOf('.')
  return {
    schema: dot === -1 ? defaultSchema : table.slice(0, dot),
    table: dot === -1 ? table : table.slice(dot + 1),
    roles: optionalStringList(value, 'roles') ?? ['anon', 'authenticated'],
  }
}
