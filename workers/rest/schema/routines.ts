// Functions as PostgREST's schema cache holds them (SchemaCache.hs
// `funcsSqlQuery`, SchemaCache/Routine.hs): which are callable at all, their
// input parameters as PostgREST lists them, and the order overloads are kept
// in, which is the order PGRST203 names its candidates in.
import type { CatalogFunction } from '../../../lib/pg-catalog/catalog.ts'

/** An input parameter as PostgREST sees it: an unnamed one is named `''`. */
export interface RoutineParam {
  name: string
  type: string
  /** No default: an argument must be given. */
  required: boolean
  variadic: boolean
}

/** The types a function's one unnamed parameter may have, each reached by a body of its own (a JSON body, `text/plain`, `text/xml`, `application/octet-stream`). */
const UNNAMED_TYPES: ReadonlySet<string> = new Set(['bytea', 'json', 'jsonb', 'text', 'xml'])

/** The input parameters (`in`, `inout`, `variadic`), in order; the last `nDefaults` have defaults. */
export function routineParams(fn: CatalogFunction): RoutineParam[] {
  const inputs = fn.args.filter((a) => a.mode === 'i' || a.mode === 'b' || a.mode === 'v')
  const firstOptional = inputs.length - fn.nDefaults
  return inputs.map((a, i) => ({ name: a.name ?? '', type: a.typeName, required: i < firstOptional, variadic: a.mode === 'v' }))
}

/**
 * PostgREST exposes a function when all its parameters are named, or when
 * its one parameter is unnamed and of a type a body can be. Any other is not
 * in its schema cache: a call of it is PGRST202, never PostgreSQL's 42883,
 * and it is in no OpenAPI description. (PostgREST's query counts as unnamed
 * only the parameters of a function with no names at all, so it also keeps
 * `f(a int, numeric)`, which no request can then call but by the key `""`,
 * and that fails in PostgreSQL; such a function is left out here.)
 */
export function isCallable(fn: CatalogFunction): boolean {
  const params = routineParams(fn)
  if (params.every((p) => p.name !== '')) return true
  return params.length === 1 && UNNAMED_TYPES.has(params[0]!.type)
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function compareParam(a: RoutineParam, b: RoutineParam): number {
  // PostgREST's RoutineParam derives Ord from its fields: name, type, (max-length type), required, variadic; False before True.
  return compareText(a.name, b.name) || compareText(a.type, b.type) || Number(a.required) - Number(b.required) || Number(a.variadic) - Number(b.variadic)
}

/**
 * PostgREST's order of the overloads of one name (Routine.hs `instance Ord
 * Routine`): fewer parameters first, then by description (none first), then
 * the parameters compared one by one.
 */
export function byPostgrestOrder(a: CatalogFunction, b: CatalogFunction): number {
  const pa = routineParams(a)
  const pb = routineParams(b)
  if (pa.length !== pb.length) return pa.length - pb.length
  if (a.comment !== b.comment) {
    if (a.comment === null) return -1
    if (b.comment === null) return 1
    const byComment = compareText(a.comment, b.comment)
    if (byComment !== 0) return byComment
  }
  for (let i = 0; i < pa.length; i++) {
    const c = compareParam(pa[i]!, pb[i]!)
    if (c !== 0) return c
  }
  return a.oid - b.oid
}
