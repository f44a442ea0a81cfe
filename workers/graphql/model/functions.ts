// Functions: stable and immutable ones are Query fields, volatile ones
// Mutation fields, and a function of one table row is a computed field of
// that table; their arguments and result types (pg_graphql's rules, widened
// by `functionShapes`).
import type { Catalog, CatalogFunction, CatalogFunctionArg, CatalogType } from '../../../lib/pg-catalog/catalog.ts'
import { columnFieldName, functionFieldName, isValidName } from '../../../lib/pg-catalog/names.ts'
import { descriptionOf, optionalString, parseDirective } from '../directives.ts'
import { valueTypeOf, type EnumModel, type TypeScope, type ValueType } from '../types.ts'
import { argDefaultsOf } from './function-defaults.ts'
import { overloadedFunctions } from './overloads.ts'
import { keylessViewsOf } from './tables.ts'
import type { FieldNames } from './field-names.ts'
import type { PendingTable, SchemaSettings } from './settings.ts'
import type { FunctionArgModel, FunctionModel, FunctionReturn } from './shapes.ts'

/**
 * The root fields of functions (query for stable ones, mutation for volatile
 * ones); a function of one table row becomes a computed field of that table.
 */
export function functionsOf(
  catalog: Catalog,
  settingsBySchema: Map<number, SchemaSettings>,
  pending: PendingTable[],
  enumByOid: Map<number, EnumModel>,
  fields: FieldNames,
): { queryFunctions: FunctionModel[]; mutationFunctions: FunctionModel[] } {
  const byReltype = new Map(pending.map((p) => [p.catalog.reltype, p]))
  const overloaded = overloadedFunctions(catalog.functions, new Set(byReltype.keys()))
  const keyless = keylessViewsOf(catalog, byReltype, settingsBySchema, enumByOid)
  const queryFunctions: FunctionModel[] = []
  const mutationFunctions: FunctionModel[] = []
  for (const f of catalog.functions) {
    if (!f.canExecute || f.variadic) continue
    const settings = settingsBySchema.get(f.schemaOid)!
    // functionShapes: the enums its signature may use; undefined while the schema keeps pg_graphql's rules.
    const shapes = settings.features.has('functionShapes') ? enumByOid : undefined
    // An overload is left out unless functionShapes is on and its own comment names it apart.
    if (overloaded.has(f.oid) && !(shapes && optionalString(parseDirective(f.comment), 'name') !== undefined)) continue
    const d = parseDirective(f.comment)
    const field = functionFieldName(f.name, optionalString(d, 'name'), settings.inflect)
    if (!isValidName(field)) continue
    const inArgs = f.args.filter((a) => INPUT_MODES.has(a.mode))
    const owner = inArgs.length === 1 || (shapes && inArgs.length > 1) ? byReltype.get(inArgs[0]!.oid)?.model : undefined
    // A computed field may return one row of a view without a key; a root function may not (pg_graphql hides it).
    const returns = returnOf(f, owner ? (oid) => byReltype.get(oid) ?? keyless.get(oid) : (oid) => byReltype.get(oid), enumByOid, shapes !== undefined, settings.types)
    if (!returns) continue
    const base = { oid: f.oid, schema: f.schema, name: f.name, field, description: descriptionOf(f.comment, d), volatile: f.volatility === 'v', returns }
    if (owner) {
      // functionShapes: the arguments after the row are the field's own.
      const args = inArgs.length === 1 ? [] : functionArgsOf(f, inArgs, settings, byReltype, shapes, 1)
      if (!args || (returns.kind === 'connection' && args.some((a) => CONNECTION_ARGS.includes(a.field)))) continue
      // Filterable when the filter can call it with the row alone: its other arguments have defaults.
      const filterable = shapes !== undefined && returns.kind === 'scalar' && args.every((a) => !a.required)
      if (fields.claimComputed(owner, field)) owner.computed.push({ ...base, args, ...(filterable ? { filterable } : {}) })
      continue
    }
    const args = functionArgsOf(f, inArgs, settings, byReltype, shapes)
    if (!args) continue
    const model: FunctionModel = { ...base, args }
    if (model.returns.kind === 'connection' && args.some((a) => CONNECTION_ARGS.includes(a.field))) continue
    ;(model.volatile ? mutationFunctions : queryFunctions).push(model)
  }
  return { queryFunctions, mutationFunctions }
}

/** Argument modes the caller gives a value for (in, inout); out arguments only shape the result. */
const INPUT_MODES: ReadonlySet<string> = new Set(['i', 'b'])

/** A connection's own arguments: a function returning one cannot have arguments of these names. */
const CONNECTION_ARGS = ['first', 'last', 'before', 'after', 'offset', 'filter', 'orderBy']

/**
 * A function's arguments (from the `from`th input argument on); undefined
 * when one has no name, no usable type or no valid field name (the function
 * is then left out). With functionShapes (`shapes`, the served enums) an
 * unnamed argument is `arg<n>`, n its position as `$n` in the function's
 * body, and enum arguments have their enum's type.
 */
function functionArgsOf(
  f: CatalogFunction,
  inArgs: CatalogFunctionArg[],
  settings: SchemaSettings,
  byReltype: Map<number, PendingTable>,
  shapes?: Map<number, EnumModel>,
  from = 0,
): FunctionArgModel[] | undefined {
  const defaults = argDefaultsOf(f, inArgs)
  const args: FunctionArgModel[] = []
  for (const [i, a] of inArgs.entries()) {
    if (i < from) continue
    const type = argTypeOf(a, shapes, settings.types)
    const name = a.name ?? (shapes ? `arg${i + 1}` : null)
    if (!name || !type || byReltype.has(a.oid)) return undefined
    const field = columnFieldName(name, undefined, settings.inflect)
    if (!isValidName(field)) return undefined
    const d = defaults[i]!
    args.push({ name, field, type, required: d.required, defaultValue: d.required ? undefined : d.value, ...(a.name ? {} : { positional: true }) })
  }
  if (!shapes) return args
  // `arg2` may also be another argument's own name.
  if (new Set(args.map((a) => a.field)).size !== args.length) return undefined
  // Arguments before an unnamed one are passed by position too, so each of them needs a value.
  let lastPositional = -1
  args.forEach((a, i) => { if (a.positional) lastPositional = i })
  return args.map((a, i) => (i < lastPositional && !a.required ? { ...a, required: true, defaultValue: undefined } : a))
}

// Enums, plain or in arrays, are left out of function signatures, as in pg_graphql.
const isEnumish = (t: CatalogType) => t.typtype === 'e' || t.category === 'E' || t.elemTyptype === 'e'

/**
 * The GraphQL type of an argument (any type without a scalar of its own is
 * Opaque); undefined when it has none. An enum (or enum array) argument has
 * one only with functionShapes (`shapes`) and when its enum is served.
 */
function argTypeOf(a: CatalogFunctionArg, shapes?: Map<number, EnumModel>, scope?: TypeScope): ValueType | undefined {
  if (!isEnumish(a)) return valueTypeOf(a, castTypeOf(a), null, NO_ENUMS, scope)
  if (!shapes) return undefined
  const type = valueTypeOf(a, castTypeOf(a), null, shapes, scope)
  return type?.enum ? type : undefined
}

const NO_ENUMS = new Map<number, EnumModel>()

/**
 * The type an argument's value is cast to. format_type of a typmod-less
 * bpchar is `character`, which is char(1) and would cut the value to one
 * character; `bpchar` keeps it whole.
 */
function castTypeOf(a: CatalogFunctionArg): string {
  if (a.oid === BPCHAR_OID) return 'bpchar'
  if (a.oid === BPCHAR_ARRAY_OID) return 'bpchar[]'
  return a.typeName
}

const BPCHAR_OID = 1042
const BPCHAR_ARRAY_OID = 1014

function returnOf(
  f: CatalogFunction,
  rowTable: (reltype: number) => PendingTable | undefined,
  enums: Map<number, EnumModel>,
  shapes: boolean,
  scope?: TypeScope,
): FunctionReturn | undefined {
  const r = f.returnType
  const table = rowTable(r.oid)
  if (table) {
    if (f.returnsSet && f.rows !== 1) return table.model.keyless ? undefined : { kind: 'connection', table: table.model }
    return { kind: 'row', table: table.model }
  }
  // Enum results are left out, as in pg_graphql, unless functionShapes serves them (a served enum only).
  // A composite result is served as its object type under `composites`.
  const composite = r.relid !== 0 && scope?.composites?.has(r.oid) === true
  if (f.returnsSet || r.typtype === 'p' || (r.relid !== 0 && !composite) || (isEnumish(r) && !shapes)) return undefined
  const type = valueTypeOf(r, r.typeName, null, enums, scope)
  if (!type || (isEnumish(r) && !type.enum)) return undefined
  return { kind: 'scalar', type }
}
