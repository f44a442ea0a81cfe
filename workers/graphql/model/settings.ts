// Each served schema's settings, read from its comment directive: inflection,
// max rows, introspection, validation, the optional additions it turns on,
// document limits and allowlist. Tables start from these and their own comments.
import type { Catalog, CatalogTable } from '../../../lib/pg-catalog/catalog.ts'
import {
  allowlistOf, enabled, isTrue, limitsOf, optionalU64, parseDirective, type Allowlist, type Directive, type DocumentLimits,
} from '../directives.ts'
import type { GeoType, TypeScope } from '../types.ts'
import { DEFAULT_MAX_ROWS, SCHEMA_FEATURES, TABLE_FEATURES, type SchemaFeature, type TableFeature, type TableModel } from './shapes.ts'

export interface SchemaSettings {
  inflect: boolean
  maxRows: number
  introspection: boolean
  validation: boolean
  tableFeatures: ReadonlySet<TableFeature>
  features: ReadonlySet<SchemaFeature>
  limits: DocumentLimits | undefined
  allowlist: Allowlist | undefined
  /** How types resolve under `domains` and `composites` (types.ts); set once the enums are known. */
  types?: TypeScope
}

/** A table while the model is built: its catalogue entry, its comment directive and its schema's settings beside its model. */
export interface PendingTable {
  catalog: CatalogTable
  directive: Directive
  settings: SchemaSettings
  model: TableModel
}

export function smallestLimits(settings: SchemaSettings[]): DocumentLimits | undefined {
  const set = settings.map((s) => s.limits).filter((l): l is DocumentLimits => l !== undefined)
  if (set.length === 0) return undefined
  const least = (key: keyof DocumentLimits) => {
    const values = set.map((l) => l[key]).filter((v): v is number => v !== undefined)
    return values.length === 0 ? undefined : Math.min(...values)
  }
  return { fields: least('fields'), rows: least('rows') }
}

/** The additions `directive` turns on, starting from `inherited`: each key it names decides for itself. */
export function featuresOf<F extends string>(directive: Directive, names: readonly F[], inherited: ReadonlySet<F>): Set<F> {
  const on = new Set(inherited)
  for (const name of names) {
    const flag = enabled(directive, name)
    if (flag === true) on.add(name)
    else if (flag === false) on.delete(name)
  }
  return on
}

/** PostGIS's geometry and geography by OID, where the extension is installed. */
export function geoTypesOf(catalog: Catalog): Map<number, GeoType> {
  return new Map((catalog.postgis ?? []).map((t) => [t.oid, { kind: t.name, schema: t.schema }]))
}

/** Each schema's settings, from its comment directive. */
export function schemaSettingsOf(catalog: Catalog): Map<number, SchemaSettings> {
  const settingsBySchema = new Map<number, SchemaSettings>()
  for (const schema of catalog.schemas) {
    const d = parseDirective(schema.comment)
    const validation = d.validation
    settingsBySchema.set(schema.oid, {
      inflect: isTrue(d, 'inflect_names'),
      maxRows: optionalU64(d, 'max_rows') ?? DEFAULT_MAX_ROWS,
      introspection: isTrue(d, 'introspection'),
      validation: !(typeof validation === 'object' && validation !== null && !Array.isArray(validation) && validation.enabled === false),
      tableFeatures: featuresOf(d, TABLE_FEATURES, new Set()),
      features: featuresOf(d, SCHEMA_FEATURES, new Set()),
      limits: limitsOf(d),
      allowlist: allowlistOf(d, schema.name),
    })
  }
  return settingsBySchema
}
