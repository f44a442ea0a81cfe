// Which relationship an embed `target!hint(...)` means, as PostgREST 13's
// `findRel` (src/PostgREST/Plan.hs) reads it, and its errors when none or
// several do (PGRST200 with its "Perhaps you meant", PGRST201).
//
// Without a hint, the target names the related relation, or (when that
// relation is a table, not a view) a foreign key's constraint, or a column of
// the origin in a one-column key: `/projects?select=client:client_id(*)` is
// the client row. With a hint, the target names the related relation and the
// hint a constraint, a column of a one-column key on either side, or a
// many-to-many's junction. A computed relationship is named by its function
// alone.
//
// A table referencing itself has one key but two relationships, so PostgREST
// tells them apart by convention: the table's name means its children (the
// one-to-many), the key's column its parent (`/employees?select=manager:
// manager_id(*),employees(*)`), and a hint with the table's name names the
// children's column (`employees!manager_id`). PostgREST never embeds a
// self-referencing one-to-one (a TODO in its source); here it follows the same
// convention, the referenced side standing for the children. A many-to-many of
// a table with itself is never matched, as in PostgREST: its two ways share
// one junction, so no hint could tell them apart.
import type { CatalogTable } from '../../../lib/pg-catalog/catalog.ts'
import { restErrors } from '../errors.ts'
import { closest } from './closest.ts'
import type { Relationship } from './relationships.ts'

export interface Origin {
  /** The relation's name in errors. */
  name: string
  /** Undefined for a function's rows of no table type, which have no relationships. */
  table: CatalogTable | undefined
}

/** PostgREST's `findRel`: the one relationship of `origin` that `target` and its hints name, or PGRST200 / PGRST201. */
export function findRelationship(
  relationships: ReadonlyMap<number, Relationship[]>,
  tables: Iterable<CatalogTable>,
  schema: string,
  origin: Origin,
  target: string,
  hints: readonly string[],
): Relationship {
  const all = origin.table ? relationships.get(origin.table.oid) ?? [] : []
  const found = all.filter((rel) => names(rel, schema, target, hints))
  if (found.length === 1) return found[0]!
  if (found.length > 1) throw restErrors.ambiguousRelationship(origin.name, target, found.map(describe), found.map((rel) => `'${rel.foreign.name}!${hintOf(rel)}'`))
  throw restErrors.noRelationship(origin.name, target, schema, hints[0] ?? null, suggestion(relationships, tables, schema, origin, target, all))
}

/** A relationship through one foreign key from a relation to itself (PostgREST's `relIsSelf`). */
const isSelf = (rel: Relationship) => rel.junction === undefined && rel.computed === undefined && rel.table.oid === rel.foreign.oid

/** From the key's referencing side (many-to-one, or one-to-one holding the columns): toward the parent. */
const towardParent = (rel: Relationship) => rel.referencing !== undefined

/** The origin's (0) or the target's (1) column of a one-column key. */
const single = (rel: Relationship, side: 0 | 1) => (rel.columns.length === 1 ? rel.columns[0]![side] : undefined)

const isView = (table: CatalogTable) => table.kind === 'v' || table.kind === 'm'

function names(rel: Relationship, schema: string, target: string, hints: readonly string[]): boolean {
  if (rel.computed) return rel.computed.name === target && rel.computed.schema === schema
  if (rel.foreign.schema !== schema || (rel.junction && rel.table.oid === rel.foreign.oid)) return false
  if (isSelf(rel)) {
    if (hints.length === 0) return towardParent(rel) ? single(rel, 0) === target : rel.foreign.name === target
    return !towardParent(rel) && rel.foreign.name === target && hints.every((hint) => single(rel, 1) === hint)
  }
  if (hints.length > 0) return rel.foreign.name === target && hints.every((hint) => matchesHint(rel, hint))
  if (rel.foreign.name === target) return true
  // A key's name as the target: PostgREST reads it only toward a table.
  return rel.junction === undefined && !isView(rel.foreign) && (rel.constraint === target || single(rel, 0) === target)
}

function matchesHint(rel: Relationship, hint: string): boolean {
  if (rel.junction) return rel.junction.table.name === hint
  return rel.constraint === hint || single(rel, 0) === hint || single(rel, 1) === hint
}

const hintOf = (rel: Relationship) => (rel.junction ? rel.junction.table.name : rel.constraint)

const list = (names: readonly string[]) => `(${names.join(', ')})`

/** One candidate in PGRST201's details, as PostgREST words it. */
function describe(rel: Relationship): { cardinality: string; embedding: string; relationship: string } {
  const embedding = `${rel.table.name} with ${rel.foreign.name}`
  const j = rel.junction
  if (j) {
    const relationship = `${j.table.name} using ${j.sourceConstraint}${list(j.source.map((p) => p[1]))} and ${j.targetConstraint}${list(j.target.map((p) => p[1]))}`
    return { cardinality: rel.cardinality, embedding, relationship }
  }
  const relationship = `${rel.constraint} using ${rel.table.name}${list(rel.columns.map((p) => p[0]))} and ${rel.foreign.name}${list(rel.columns.map((p) => p[1]))}`
  return { cardinality: rel.cardinality, embedding, relationship }
}

/**
 * PostgREST's hint for PGRST200 (Error.hs `noRelBetweenHint`): when the origin
 * has relationships, a close name among the relations they lead to (a computed
 * relationship's too, by the relation it returns, never by its function's
 * name), none when the target is one of them (the hint was wrong); otherwise a
 * close name among the relations that have relationships.
 */
function suggestion(
  relationships: ReadonlyMap<number, Relationship[]>,
  tables: Iterable<CatalogTable>,
  schema: string,
  origin: Origin,
  target: string,
  ofOrigin: readonly Relationship[],
): string | null {
  const inSchema = ofOrigin.filter((r) => r.foreign.schema === schema)
  if (inSchema.length > 0) {
    const targets = new Set(inSchema.map((r) => r.foreign.name))
    if (targets.has(target)) return null
    const near = closest(target, targets)
    return near ? `Perhaps you meant '${near}' instead of '${target}'.` : null
  }
  const parents = [...tables].filter((t) => t.schema === schema && relationships.has(t.oid)).map((t) => t.name)
  if (parents.includes(origin.name)) return null
  const near = closest(origin.name, parents)
  return near ? `Perhaps you meant '${near}' instead of '${origin.name}'.` : null
}
