// Which function `/rpc/<fn>` calls and with what (shared/reference/postgrest.md
// section 4): named arguments from a JSON object (POST) or the query string
// (GET), overloads chosen by the set of keys, a single unnamed json/jsonb
// parameter (or `Prefer: params=single-object`) taking the whole body; form
// and CSV bodies as named arguments (their values text), and a `text/plain`,
// `text/xml` or `application/octet-stream` body as the one argument of a
// function whose only parameter is unnamed and of that type.
// Arguments travel as one JSON parameter read by json_to_record with the
// function's own types, so PostgreSQL converts each.
import type { CatalogFunction, CatalogFunctionArg } from '../../../lib/pg-catalog/catalog.ts'
import { ident, qualified } from '../../../lib/pg-catalog/quote.ts'
import type { BodyMedia } from '../request/bodies.ts'
import { restErrors } from '../errors.ts'
import { closest } from '../schema/closest.ts'
import type { RestModel } from '../schema/model.ts'
import type { RestCall } from './plan.ts'
import type { Params } from './sql.ts'

export interface FunctionCall {
  fn: CatalogFunction
  /** The call expression. */
  call: string
  /** `from ...` the call needs (its arguments' record), or ''. */
  from: string
  /** Query keys taken as arguments (not filters). */
  argKeys: Set<string>
}

const inputs = (fn: CatalogFunction): CatalogFunctionArg[] => fn.args.filter((a) => a.mode === 'i' || a.mode === 'b' || a.mode === 'v')

function required(fn: CatalogFunction): CatalogFunctionArg[] {
  const all = inputs(fn)
  return all.slice(0, all.length - fn.nDefaults)
}

const isJsonType = (arg: CatalogFunctionArg) => arg.typeName === 'json' || arg.typeName === 'jsonb'

function matches(fn: CatalogFunction, keys: ReadonlySet<string>, exact: boolean): boolean {
  const names = new Set(inputs(fn).map((a) => a.name))
  if (names.has(null) && inputs(fn).length > 0) return false
  if (!required(fn).every((a) => keys.has(a.name!))) return false
  return !exact || [...keys].every((k) => names.has(k))
}

function notFound(model: RestModel, call: RestCall, keys: string[], jsonBody: boolean): never {
  const name = `${call.schema}.${call.name}`
  const sorted = [...keys].sort()
  const withParams = sorted.length > 0 ? `(${sorted.join(', ')})` : ' without parameters'
  const searched = sorted.length > 0 ? `with parameters ${sorted.join(', ')}` : 'without parameters'
  const details = `Searched for the function ${name} ${searched}${jsonBody ? ' or with a single unnamed json/jsonb parameter' : ''}, but no matches were found in the schema cache.`
  const inSchema = [...model.functions.values()].flat().filter((f) => f.schema === call.schema).map((f) => f.name)
  const near = closest(call.name, inSchema)
  throw restErrors.noFunction(`Could not find the function ${name}${withParams} in the schema cache`, details, near ? `Perhaps you meant to call the function ${call.schema}.${near}` : null)
}

function signature(fn: CatalogFunction): string {
  return `${fn.schema}.${fn.name}(${inputs(fn).map((a) => `${a.name ?? ''} => ${a.typeName}`).join(', ')})`
}

export function resolveFunction(model: RestModel, call: RestCall, params: Params): FunctionCall {
  const candidates = model.functions.get(`${call.schema}\0${call.name}`) ?? []
  const target = qualified(call.schema, call.name)
  if (call.method === 'POST') {
    const rawType = RAW_TYPES[call.bodyMedia]
    if (rawType !== undefined) return rawArgument(call, candidates, target, rawType, params)
    const json = call.bodyMedia === 'json'
    let body: unknown
    if (call.payload !== undefined) {
      // A form's pairs are the arguments; a CSV body's first row is (its header names them).
      body = Array.isArray(call.payload) ? call.payload[0] ?? {} : call.payload
    } else {
      try {
        body = call.body.trim() === '' ? {} : JSON.parse(call.body)
      } catch {
        throw restErrors.invalidBody('Empty or invalid json')
      }
    }
    const single = (fn: CatalogFunction) => inputs(fn).length === 1 && isJsonType(inputs(fn)[0]!)
    if (call.prefs.params === 'single-object') {
      const fn = candidates.find(single)
      if (fn === undefined) notFound(model, call, [], true)
      return { fn, call: `${target}(${params.add(JSON.stringify(body), inputs(fn)[0]!.typeName)})`, from: '', argKeys: new Set() }
    }
    const object = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined
    const keys = object ? Object.keys(object).filter((k) => call.query.columns === undefined || call.query.columns.includes(k)) : []
    const keySet = new Set(keys)
    const found = object ? candidates.filter((fn) => matches(fn, keySet, true)) : []
    if (found.length > 1) throw restErrors.ambiguousFunction(found.map(signature).join(', '))
    if (found.length === 1) {
      const args: Record<string, unknown> = {}
      for (const k of keys) args[k] = object![k]
      return withArgs(found[0]!, target, args, params, new Set())
    }
    // The fallback: one unnamed json/jsonb parameter takes the whole body (a JSON one: PostgREST's hasSingleUnnamedParam).
    const fallback = json ? candidates.find((fn) => single(fn) && inputs(fn)[0]!.name === null) : undefined
    if (fallback) return { fn: fallback, call: `${target}(${params.add(call.body.trim() === '' ? '{}' : call.body, inputs(fallback)[0]!.typeName)})`, from: '', argKeys: new Set() }
    notFound(model, call, keys, json)
  }
  // GET and HEAD: the query keys naming a parameter are arguments; the others are filters.
  const queryKeys = new Set(call.query.rawFilters.map(([k]) => k))
  const found = candidates.filter((fn) => {
    const names = inputs(fn).map((a) => a.name)
    return matches(fn, new Set([...queryKeys].filter((k) => names.includes(k))), false)
  })
  if (found.length > 1) {
    // The best candidate takes the most of the keys.
    const taken = (fn: CatalogFunction) => inputs(fn).filter((a) => queryKeys.has(a.name ?? '')).length
    const most = Math.max(...found.map(taken))
    const best = found.filter((fn) => taken(fn) === most)
    if (best.length > 1) throw restErrors.ambiguousFunction(best.map(signature).join(', '))
    found.splice(0, found.length, best[0]!)
  }
  if (found.length === 0) notFound(model, call, [...queryKeys], false)
  const fn = found[0]!
  const names = new Set(inputs(fn).map((a) => a.name!))
  const args: Record<string, unknown> = {}
  for (const [k, v] of call.query.rawFilters) if (names.has(k)) args[k] = v
  return withArgs(fn, target, args, params, new Set(Object.keys(args)))
}

/** The parameter type each raw body is for (`text/plain`, `text/xml`, `application/octet-stream`). */
const RAW_TYPES: Partial<Record<BodyMedia, string>> = { text: 'text', xml: 'xml', binary: 'bytea' }

/**
 * A raw body, the one unnamed argument of the function's only overload that
 * takes exactly one unnamed parameter of its type (PostgREST 13); else
 * PGRST202 naming that parameter. Bytes travel in hex.
 */
function rawArgument(call: RestCall, candidates: readonly CatalogFunction[], target: string, type: string, params: Params): FunctionCall {
  const fn = candidates.find((f) => inputs(f).length === 1 && inputs(f)[0]!.name === null && inputs(f)[0]!.typeName === type)
  if (fn === undefined) {
    const name = `${call.schema}.${call.name}`
    throw restErrors.noFunction(
      `Could not find the function ${name} in the schema cache`,
      `Searched for the function ${name} with a single unnamed ${type} parameter, but no matches were found in the schema cache.`,
      null,
    )
  }
  // An octet-stream body arrives one character per byte (lib/http/body.ts bodyText): its bytes, in hex.
  const value = type === 'bytea' ? `\\x${Buffer.from(call.body, 'latin1').toString('hex')}` : call.body
  return { fn, call: `${target}(${params.add(value, type)})`, from: '', argKeys: new Set() }
}

function withArgs(fn: CatalogFunction, target: string, args: Record<string, unknown>, params: Params, argKeys: Set<string>): FunctionCall {
  const names = Object.keys(args)
  if (names.length === 0) return { fn, call: `${target}()`, from: '', argKeys }
  const types = new Map(inputs(fn).map((a) => [a.name!, a.typeName]))
  const record = names.map((n) => `${ident(n)} ${types.get(n)}`).join(', ')
  const json = params.add(JSON.stringify(args), 'json')
  return {
    fn,
    call: `${target}(${names.map((n) => `${ident(n)} => pgrst_args.${ident(n)}`).join(', ')})`,
    from: `from pg_catalog.json_to_record(${json}) as pgrst_args(${record})`,
    argKeys,
  }
}
