// API names from database names, as pg_graphql derives them (v1.6):
// literal by default; with the schema's `inflect_names`, a character after a
// non-alphanumeric one is upper-cased and underscores are removed. In lib/
// with the catalogue reading, so a second concern names objects the same way.

export function baseTypeName(name: string, override: string | undefined, inflect: boolean): string {
  if (override !== undefined) return override
  if (!inflect) return name
  let out = ''
  let previous = '+'
  for (const ch of name) {
    out += /[\p{L}\p{N}]/u.test(previous) ? ch : ch.toUpperCase()
    previous = ch
  }
  return out.replaceAll('_', '')
}

export function lowerFirst(token: string): string {
  return token.length === 0 ? token : token[0]!.toLowerCase() + token.slice(1)
}

export function columnFieldName(name: string, override: string | undefined, inflect: boolean): string {
  if (override !== undefined) return override
  return inflect ? lowerFirst(baseTypeName(name, undefined, true)) : name
}

export function functionFieldName(name: string, override: string | undefined, inflect: boolean): string {
  if (override !== undefined) return override
  const trimmed = name.startsWith('_') ? name.slice(1) : name
  return lowerFirst(baseTypeName(trimmed, undefined, inflect))
}

/**
 * Name of a relation field. `towardsTypeName` is the base type name of the
 * table the field points at; `columns` the key columns on the side whose names
 * suggest the field (the foreign key columns for the to-one side).
 */
export function relationFieldName(
  towardsTypeName: string,
  columns: string[],
  unique: boolean,
  inflect: boolean,
  override: string | undefined,
): string {
  if (override !== undefined) return override
  const asField = lowerFirst(towardsTypeName)
  if (!unique) return `${asField}Collection`
  if (columns.length === 1) {
    const column = columns[0]!
    const suffix = inflect ? '_id' : 'Id'
    if (column.endsWith(suffix) && column.length > suffix.length) {
      return lowerFirst(baseTypeName(column.slice(0, -suffix.length), undefined, inflect))
    }
  }
  return asField
}

const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/

export function isValidName(name: string): boolean {
  return GRAPHQL_NAME.test(name) && !name.startsWith('__')
}
