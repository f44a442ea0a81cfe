// The call `/rpc/<fn>` makes (shared/reference/postgrest.md section 4), once
// find-function.ts has chosen the overload as PostgREST does: named arguments
// from a JSON object (POST), a form or CSV body (their values text) or the
// query parameters that are no filters (GET); a function of one unnamed
// parameter is passed the whole body (a JSON body as sent, a `text/plain`,
// `text/xml` or `application/octet-stream` body as is), as PostgREST's
// `OnePosParam`; `Prefer: params=single-object` passes it to the one json
// parameter. Named arguments travel as one JSON parameter read by
// json_to_record with the function's own types, so PostgreSQL converts each.
import type { CatalogFunction, CatalogFunctionArg } from '../../../lib/pg-catalog/catalog.ts'
import { ident, qualified } from '../../../lib/pg-catalog/quote.ts'
import type { BodyMedia } from '../request/bodies.ts'
import { restErrors } from '../errors.ts'
import { OPERATORS } from '../request/filters.ts'
import { findFunction, functionNotFound } from './find-function.ts'
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

const isJsonType = (arg: CatalogFunctionArg) => arg.typeName === 'json' || arg.typeName === 'jsonb'

/**
 * A query value that is a filter, not an argument (PostgREST's QueryParams
 * `hasOperator`, `hasFtsOperator`): `op.value`, `not.op.value`, `is.`/`in.`,
 * `op(any|all).value`, `fts(config).value`. A key with a dot (an embed's
 * filter) is a filter too.
 */
function isFilter(key: string, value: string): boolean {
  if (key.includes('.')) return true
  const parts = value.split('.')
  const first = parts[0]!
  if (first === 'not' && parts.length > 1) return true
  if (first === 'is' || first === 'in') return true
  if ((OPERATORS as readonly string[]).includes(first.replace(/\((any|all)\)$/, ''))) return true
  const paren = value.indexOf('(')
  return paren > 0 && FTS_OPERATORS.has(value.slice(0, paren))
}

const FTS_OPERATORS: ReadonlySet<string> = new Set(['fts', 'plfts', 'phfts', 'wfts'])

/** The body of a POST as its arguments: a JSON object (or a form's pairs, a CSV body's first row), else nothing to name. */
function bodyObject(call: RestCall): { value: unknown; object: Record<string, unknown> | undefined } {
  let value: unknown
  if (call.payload !== undefined) {
    // A form's pairs are the arguments; a CSV body's first row is (its header names them).
    value = Array.isArray(call.payload) ? call.payload[0] ?? {} : call.payload
  } else {
    try {
      value = call.body.trim() === '' ? {} : JSON.parse(call.body)
    } catch {
      throw restErrors.invalidBody('Empty or invalid json')
    }
  }
  const object = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  return { value, object }
}

export function resolveFunction(model: RestModel, call: RestCall, params: Params): FunctionCall {
  const target = qualified(call.schema, call.name)
  const lookup = { schema: call.schema, name: call.name }
  if (call.method === 'POST') {
    const raw = RAW_MEDIA.has(call.bodyMedia)
    const { value, object } = raw ? { value: undefined, object: undefined } : bodyObject(call)
    if (call.prefs.params === 'single-object') {
      const candidates = model.functions.get(`${call.schema}\0${call.name}`) ?? []
      const fn = candidates.find((f) => inputs(f).length === 1 && isJsonType(inputs(f)[0]!))
      if (fn === undefined) throw functionNotFound(model, { ...lookup, keys: [], post: 'json' })
      return { fn, call: `${target}(${params.add(JSON.stringify(value), inputs(fn)[0]!.typeName)})`, from: '', argKeys: new Set() }
    }
    const keys = object ? Object.keys(object).filter((k) => call.query.columns === undefined || call.query.columns.includes(k)) : []
    const fn = findFunction(model, { ...lookup, keys, post: call.bodyMedia })
    if (onlyUnnamed(fn)) return positional(fn, target, params, bodyArgument(call, fn))
    const args: Record<string, unknown> = {}
    for (const k of keys) args[k] = object![k]
    return withArgs(fn, target, args, params, new Set())
  }
  // GET and HEAD: the query parameters that are no filters are the arguments (PostgREST's `qsParams`).
  const argPairs = call.query.rawFilters.filter(([k, v]) => !isFilter(k, v))
  const argKeys = new Set(argPairs.map(([k]) => k))
  const fn = findFunction(model, { ...lookup, keys: [...argKeys] })
  const args: Record<string, unknown> = {}
  for (const [k, v] of argPairs) args[k] = v
  if (onlyUnnamed(fn)) return { ...positional(fn, target, params, JSON.stringify(args)), argKeys }
  return withArgs(fn, target, args, params, argKeys)
}

/** The media whose body is itself the one argument (`text/plain`, `text/xml`, `application/octet-stream`). */
const RAW_MEDIA: ReadonlySet<BodyMedia> = new Set(['text', 'xml', 'binary'])

/** A function of one unnamed parameter: PostgREST passes it the whole body (its `OnePosParam`), whatever the keys were. */
const onlyUnnamed = (fn: CatalogFunction) => inputs(fn).length === 1 && inputs(fn)[0]!.name === null

/** The whole body as the one argument: JSON as sent (`{}` when empty), a raw body as is (bytes in hex), a form or CSV row as JSON. */
function bodyArgument(call: RestCall, fn: CatalogFunction): string {
  if (inputs(fn)[0]!.typeName === 'bytea' && call.bodyMedia === 'binary') {
    // An octet-stream body arrives one character per byte (lib/http/body.ts bodyText): its bytes, in hex.
    return `\\x${Buffer.from(call.body, 'latin1').toString('hex')}`
  }
  if (call.payload !== undefined) return JSON.stringify(Array.isArray(call.payload) ? call.payload[0] ?? {} : call.payload)
  return RAW_MEDIA.has(call.bodyMedia) || call.body.trim() !== '' ? call.body : '{}'
}

function positional(fn: CatalogFunction, target: string, params: Params, value: string): FunctionCall {
  return { fn, call: `${target}(${params.add(value, inputs(fn)[0]!.typeName)})`, from: '', argKeys: new Set() }
}

function withArgs(fn: CatalogFunction, target: string, args: Record<string, unknown>, params: Params, argKeys: Set<string>): FunctionCall {
  const types = new Map(inputs(fn).map((a) => [a.name ?? '', a.typeName]))
  // An unnamed parameter cannot be passed by name (PostgreSQL then finds no such call, as with PostgREST).
  const names = Object.keys(args).filter((n) => n !== '' && types.has(n))
  if (names.length === 0) return { fn, call: `${target}()`, from: '', argKeys }
  const record = names.map((n) => `${ident(n)} ${types.get(n)}`).join(', ')
  const json = params.add(JSON.stringify(args), 'json')
  return {
    fn,
    call: `${target}(${names.map((n) => `${ident(n)} => pgrst_args.${ident(n)}`).join(', ')})`,
    from: `from pg_catalog.json_to_record(${json}) as pgrst_args(${record})`,
    argKeys,
  }
}
