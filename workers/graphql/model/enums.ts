// The served enums: their GraphQL names and values (with `mappings`).
import type { Catalog } from '../../../lib/pg-catalog/catalog.ts'
import { baseTypeName, isValidName } from '../../../lib/pg-catalog/names.ts'
import { descriptionOf, mappingsOf, optionalString, parseDirective } from '../directives.ts'
import type { EnumModel, EnumValueModel } from '../types.ts'
import type { SchemaSettings } from './settings.ts'

export function enumsOf(catalog: Catalog, settingsBySchema: Map<number, SchemaSettings>): Map<number, EnumModel> {
  const enumByOid = new Map<number, EnumModel>()
  for (const e of catalog.enums) {
    const d = parseDirective(e.comment)
    const settings = settingsBySchema.get(e.schemaOid)!
    const mappings = mappingsOf(d)
    // pg_graphql reads a name back through the mappings first
    // (BiBTreeMap::get_by_right), so a name a mapping gives one label means
    // that label, even where another, unmapped label is spelt the same.
    const mappedNames = new Set(e.labels.flatMap((label) => mappings.get(label) ?? []))
    const values: EnumValueModel[] = e.labels.map((label) => {
      const name = mappings.get(label)
      if (name !== undefined) return { db: label, name }
      return mappedNames.has(label) ? { db: label, name: label, shadowed: true } : { db: label, name: label }
    })
    const model: EnumModel = {
      oid: e.oid,
      schema: e.schema,
      sqlName: e.name,
      name: baseTypeName(e.name, optionalString(d, 'name'), settings.inflect),
      description: descriptionOf(e.comment, d),
      values,
      mapped: mappings.size > 0,
    }
    if (!isValidName(model.name) || values.some((v) => !isValidName(v.name) || ['true', 'false', 'null'].includes(v.name))) continue
    enumByOid.set(e.oid, model)
  }
  return enumByOid
}
