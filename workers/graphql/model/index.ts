// The reflected model: which tables, columns, relations, enums and functions
// of the catalogue the caller's role gets in its GraphQL schema, under which
// names (pg_graphql v1.6's rules, SPEC 2.3 and 2.4). Both the graphql-js
// schema (validation, introspection) and the SQL planner read this model.
// One file per part: settings.ts (schema comments), enums.ts, tables.ts,
// relations.ts, functions.ts; shapes.ts holds the model's types.
import type { Catalog } from '../../../lib/pg-catalog/catalog.ts'
import { typeScopesOf } from '../types.ts'
import { enumsOf } from './enums.ts'
import { FieldNames } from './field-names.ts'
import { functionsOf } from './functions.ts'
import { linksOf, relateReferenced, relateReferencing } from './relations.ts'
import { geoTypesOf, schemaSettingsOf, smallestLimits, type PendingTable } from './settings.ts'
import type { Model } from './shapes.ts'
import { tableOf, withoutClashingUpserts } from './tables.ts'

export * from './shapes.ts'

export function buildModel(catalog: Catalog): Model {
  const settingsBySchema = schemaSettingsOf(catalog)
  const enumByOid = enumsOf(catalog, settingsBySchema)
  for (const [oid, types] of typeScopesOf(catalog, settingsBySchema, enumByOid)) settingsBySchema.get(oid)!.types = types
  const geo = geoTypesOf(catalog)
  for (const s of settingsBySchema.values()) if (s.features.has('postgis')) s.types = { ...s.types, geo }
  const pending: PendingTable[] = []
  for (const t of catalog.tables) {
    const table = tableOf(t, settingsBySchema.get(t.schemaOid)!, enumByOid)
    if (table) pending.push(table)
  }
  const fields = new FieldNames()
  const links = linksOf(pending)
  // pg_graphql lists a type's fields over its own keys before those over keys that reference it.
  for (const link of links) relateReferenced(link, fields)
  for (const link of links) relateReferencing(link, fields)
  const { queryFunctions, mutationFunctions } = functionsOf(catalog, settingsBySchema, pending, enumByOid, fields)

  const tables = pending.map((p) => p.model)
  withoutClashingUpserts(tables, enumByOid.values())
  const schemaSettings = [...settingsBySchema.values()]
  return {
    tables,
    tableByTypeName: new Map(tables.map((t) => [t.typeName, t])),
    tableBySqlName: new Map(tables.map((t) => [`${t.schema}\0${t.name}`, t])),
    enums: [...enumByOid.values()],
    queryFunctions,
    mutationFunctions,
    introspection: schemaSettings.some((s) => s.introspection),
    introspectedSchemas: new Set(catalog.schemas.filter((s) => settingsBySchema.get(s.oid)!.introspection).map((s) => s.name)),
    validation: schemaSettings.length === 0 || schemaSettings.every((s) => s.validation),
    schemaFeatures: new Map(catalog.schemas.map((s) => [s.name, settingsBySchema.get(s.oid)!.features])),
    limits: smallestLimits(schemaSettings),
    allowlist: schemaSettings.find((s) => s.allowlist !== undefined)?.allowlist,
  }
}
