// Which overload `/rpc/<fn>` calls, chosen before any SQL as PostgREST's
// `findProc` (Plan.hs) chooses it, so PostgreSQL never picks among overloads
// itself (its 42725 "function is not unique") nor refuses a call PostgREST
// would have named (42883). The argument keys are a JSON body's keys (or
// `columns=`), a form's or CSV header's names, or on GET the query
// parameters that are no filters. Not found is PGRST202 and several matches
// are PGRST203, worded as PostgREST's Error.hs words them.
import type { CatalogFunction } from '../../../lib/pg-catalog/catalog.ts'
import type { BodyMedia } from '../request/bodies.ts'
import { restErrors } from '../errors.ts'
import { closest, mostSimilar } from '../schema/closest.ts'
import type { RestModel } from '../schema/model.ts'
import { byPostgrestOrder, routineParams } from '../schema/routines.ts'

/** How the function is called: its name, the argument keys, and for a POST the body's media (GET: `post` undefined). */
export interface FunctionLookup {
  schema: string
  name: string
  keys: readonly string[]
  post?: BodyMedia
}

/** The raw media a POST body can be, each the one unnamed parameter of its type. */
const RAW_TYPE: Partial<Record<BodyMedia, string>> = { text: 'text', xml: 'xml', binary: 'bytea' }

const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>) => a.size === b.size && [...a].every((k) => b.has(k))

/** PostgREST's `matchesParams`: the keys are the required parameters, plus any of the defaulted ones. */
function matchesParams(fn: CatalogFunction, keys: ReadonlySet<string>, post: BodyMedia | undefined): boolean {
  const params = routineParams(fn)
  // A raw body is an argument in itself: a function without parameters cannot take it.
  if (params.length === 0) return keys.size === 0 && !(post !== undefined && RAW_TYPE[post] !== undefined)
  const required = new Set(params.filter((p) => p.required).map((p) => p.name))
  const optional = new Set(params.filter((p) => !p.required).map((p) => p.name))
  return sameSet(new Set([...keys].filter((k) => !optional.has(k))), required)
}

/** PostgREST's `hasSingleUnnamedParam`: one parameter, unnamed, of the type the POST body's media is for. */
function takesBody(fn: CatalogFunction, post: BodyMedia | undefined): boolean {
  const params = routineParams(fn)
  if (post === undefined || params.length !== 1 || params[0]!.name !== '') return false
  const type = params[0]!.type
  return post === 'json' ? type === 'json' || type === 'jsonb' : RAW_TYPE[post] === type
}

/** A candidate as PGRST203 lists it: `s.f(a => integer, => text)`. */
function signature(fn: CatalogFunction): string {
  return `${fn.schema}.${fn.name}(${routineParams(fn).map((p) => `${p.name} => ${p.type}`).join(', ')})`
}

export function findFunction(model: RestModel, lookup: FunctionLookup): CatalogFunction {
  const overloads = [...(model.functions.get(`${lookup.schema}\0${lookup.name}`) ?? [])].sort(byPostgrestOrder)
  const keys = new Set(lookup.keys)
  const named = overloads.filter((fn) => matchesParams(fn, keys, lookup.post))
  // Functions of one unnamed parameter taking the whole body: only when no overload takes the keys.
  const fallback = overloads.filter((fn) => !named.includes(fn) && takesBody(fn, lookup.post))
  const found = named.length > 0 ? named : fallback
  if (found.length === 1) return found[0]!
  if (found.length > 1) throw restErrors.ambiguousFunction(found.map(signature).join(', '))
  throw functionNotFound(model, lookup)
}

/** PGRST202 as PostgREST's `NoRpc`: the keys sorted (a set), a raw body's media named instead, and its hint. */
export function functionNotFound(model: RestModel, lookup: FunctionLookup) {
  const overloads = [...(model.functions.get(`${lookup.schema}\0${lookup.name}`) ?? [])].sort(byPostgrestOrder)
  const fn = `${lookup.schema}.${lookup.name}`
  const keys = [...new Set(lookup.keys)].sort()
  const listed = keys.join(', ')
  const raw = lookup.post === undefined ? undefined : RAW_TYPE[lookup.post]
  const message = `Could not find the function ${fn}${raw !== undefined ? '' : keys.length === 0 ? ' without parameters' : `(${listed})`} in the schema cache`
  const withKeys = keys.length === 0 ? ' without parameters' : ` with parameter${keys.length > 1 ? 's' : ''} ${listed}`
  const searched =
    raw !== undefined ? ` with a single unnamed ${raw} parameter` : lookup.post === 'json' ? `${withKeys} or with a single unnamed json/jsonb parameter` : withKeys
  const details = `Searched for the function ${fn}${searched}, but no matches were found in the schema cache.`
  // A raw body names no parameters: no hint. Otherwise the closest parameter list of a same-named function, or the closest name.
  const hint = raw !== undefined ? null : noFunctionHint(model, lookup, keys, overloads)
  return restErrors.noFunction(message, details, hint)
}

function noFunctionHint(model: RestModel, lookup: FunctionLookup, keys: string[], overloads: readonly CatalogFunction[]): string | null {
  const prefix = `Perhaps you meant to call the function ${lookup.schema}.`
  if (overloads.length > 0) {
    // PostgREST's `noRpcHint`: the parameter lists as "(a, b)", names sorted, at a fuzzy score of 0.33 or more.
    const asText = (names: string[]) => `(${[...names].sort().join(', ')})`
    const lists = overloads.map((fn) => asText(routineParams(fn).map((p) => p.name)))
    const near = mostSimilar(asText(keys), lists, 0.33)
    return near === undefined ? null : `${prefix}${lookup.name}${near}`
  }
  const inSchema = [...model.functions.values()].flat().filter((f) => f.schema === lookup.schema).map((f) => f.name)
  const near = closest(lookup.name, inSchema)
  return near === undefined ? null : `${prefix}${near}`
}
