// Function argument defaults as introspection shows them: pg_graphql's
// reading of pg_get_expr's text, quirks and all.
import type { CatalogFunction, CatalogFunctionArg } from '../../../lib/pg-catalog/catalog.ts'

/** Whether an argument must be given, and the default introspection shows for it. */
export interface ArgDefault {
  required: boolean
  /** JSON text of the GraphQL default value; undefined when none is shown. */
  value: string | undefined
}

/**
 * The defaults of the input arguments, read as pg_graphql reads them: it
 * splits pg_get_expr's list at every comma, so a default with a comma inside
 * (an array, a quoted string) misaligns the list, and then no argument has a
 * default (all are required). A default is shown only when it is a plain
 * literal of int2/int4, bool, float4/float8 or text; any other default (null,
 * an expression) makes the argument optional without a shown default.
 */
export function argDefaultsOf(f: CatalogFunction, inArgs: CatalogFunctionArg[]): ArgDefault[] {
  const out: ArgDefault[] = inArgs.map(() => ({ required: true, value: undefined }))
  if (f.nDefaults === 0 || f.defaults === null) return out
  const texts = f.defaults.split(',')
  if (texts.length !== f.nDefaults) return out
  const first = inArgs.length - f.nDefaults
  texts.forEach((text, i) => {
    out[first + i] = { required: false, value: shownDefault(text.trim(), inArgs[first + i]!.oid) }
  })
  return out
}

const INT32 = /^[+-]?\d+$/
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/

const intDefault = (text: string) => {
  const n = Number(text)
  return INT32.test(text) && n >= -(2 ** 31) && n < 2 ** 31 ? String(n) : undefined
}
const boolDefault = (text: string) => (text === 'true' || text === 'false' ? text : undefined)
const floatDefault = (text: string) => (FLOAT.test(text) ? String(Number(text)) : undefined)
// pg_graphql strips commas, then quotes, from both ends of the literal: `'it''s'::text` shows as `it''s`.
const textDefault = (text: string) =>
  text.endsWith('::text') ? JSON.stringify(text.slice(0, -'::text'.length).replace(/^,+|,+$/g, '').replace(/^'+|'+$/g, '')) : undefined

/** By argument type OID (int2, int4, bool, float4, float8, text): the shown default of a default's text. */
const SHOWN_DEFAULTS: Record<number, (text: string) => string | undefined> = {
  21: intDefault, 23: intDefault, 16: boolDefault, 700: floatDefault, 701: floatDefault, 25: textDefault,
}

function shownDefault(text: string, oid: number): string | undefined {
  if (text.startsWith('NULL::')) return undefined
  return SHOWN_DEFAULTS[oid]?.(text)
}
