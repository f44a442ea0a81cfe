// Embedded resources (shared/reference/postgrest.md section 1 "select",
// "Embed filters", "order"): a relation's select list with its embeds, each
// a LATERAL subquery of the one statement, as PostgREST 13 builds them.
//
// - to-one `rel(..)`: `row_to_json` of the related row, or null;
// - to-many: `json_agg` of the related rows (filtered, ordered, limited by
//   `rel.col=`, `rel.or=`, `rel.order=`, `rel.limit=`, `rel.offset=`), `[]`
//   when none; many-to-many joins the junction inside the subquery;
// - `...rel(..)`: to-one lifts the columns into the parent; to-many (13)
//   gives one array per column, in the same order;
// - `!inner` (an inner lateral join), `rel=not.is.null` / `rel=is.null`
//   (also inside `or=`) filter the parents; `order=rel(col)` orders by a
//   to-one embed's column (a to-many one is PGRST118).
// - a computed relationship (computed.ts) reads its function's rows for the
//   parent's row instead of a table joined on a key.
//
// Each embedded table is read under the caller's role like the parent, so
// its own RLS policies decide which rows appear inside the embed. Every
// identifier is quoted; filter values are parameters (sql.ts).
import { ident, qualified } from '../../../lib/pg-catalog/quote.ts'
import { restErrors } from '../errors.ts'
import type { Condition, Logic, OrderTerm } from '../request/filters.ts'
import type { RestModel } from '../schema/model.ts'
import { findRelationship, type Origin } from '../schema/find-relationship.ts'
import { isToOne, type Relationship } from '../schema/relationships.ts'
import type { EmbedParam } from '../request/request.ts'
import type { SelectItem } from '../request/select.ts'
import { fieldSql, orderTermSql, outputName, selectListSql, whereSql, type FilterContext, type Params } from './sql.ts'

type EmbedItem = SelectItem & { kind: 'embed' }
type ColumnItem = SelectItem & { kind: 'column' }

const isAggregate = (item: SelectItem): item is ColumnItem => item.kind === 'column' && item.aggregate !== undefined

/**
 * An aggregate in a to-one spread (`...clients(name, id.count())`) is done by
 * the nearest level that is not a to-one spread, grouped by its other items
 * there, as PostgREST 13 hoists it (Plan.hs `hoistSpreadAggFunctions`): inside
 * the spread it would count the one related row. The spread selects the plain
 * value under a name of its own (`pgrst_a<n>`), lifted like its columns.
 */
interface Hoisted {
  byItem: Map<SelectItem, string>
  byName: Map<string, ColumnItem>
}

interface EmbedArgs {
  filters: Array<Condition | Logic>
  order: OrderTerm[]
  limit?: number
  offset?: number
}

/** An embed resolved to its relationship, with the SQL names it gets. */
interface Node {
  item: EmbedItem
  rel: Relationship
  /** The lateral subquery's alias. */
  lateral: string
  /** The embedded table's alias inside it. */
  rows: string
  toOne: boolean
  children: Node[]
  args: EmbedArgs
  /** It filters the parents (`!inner`, or `rel=[not.]is.null`): the count must join it too. */
  filtering: boolean
  /** Columns of a to-one embed the parent orders by (`order=rel(col)`), selected as `pgrst_o<i>`. */
  orderBy: string[]
}

export interface RelationQuery {
  model: RestModel
  schema: string
  /** The relation's name in errors and its table (undefined: a function's rows of no table type, which have no relationships). */
  origin: Origin
  /** The SQL name of the relation's rows. */
  alias: string
  items: readonly SelectItem[]
  /** What `*` stands for. */
  star: string
  filters: ReadonlyArray<Condition | Logic>
  order: readonly OrderTerm[]
  embedParams: readonly EmbedParam[]
  params: Params
  columnType: (name: string) => string | undefined
  /** Aggregates are allowed (else PGRST123). */
  aggregates: boolean
}

export interface RelationSql {
  list: string
  where: string
  /** Parameters used by `where` and `filteringJoins` (the planned count's). */
  whereParams: number
  /** Joins of the embeds that filter the parents (what a count needs). */
  filteringJoins: string
  /** Every join, the filtering ones included. */
  joins: string
  /** ` group by ...` when the select list aggregates: its other items. */
  groupBy: string
  order: string
}

/** Output names of a select list (the CSV header), `starColumns` for `*`, embeds by their key. */
export function outputNamesOf(items: readonly SelectItem[], starColumns: readonly string[]): string[] {
  return items.flatMap((item) => {
    if (item.kind === 'star') return starColumns
    if (item.kind === 'column') return [item.alias ?? outputName(item.field)]
    return item.spread || item.select.length === 0 ? [] : [item.alias ?? item.name]
  })
}

/** The relation's select list, where, order and joins, its embeds resolved against the model's relationships. */
export function relationSql(q: RelationQuery): RelationSql {
  const planner = new EmbedPlanner(q.model, q.schema, q.params, q.aggregates)
  const nodes = planner.resolve(q.origin, q.items)
  planner.attach(nodes, q.embedParams)
  const sql = planner.level(
    { alias: q.alias, name: q.origin.name, columnType: q.columnType },
    nodes,
    q.items,
    q.star,
    { filters: [...q.filters], order: [...q.order] },
    [],
  )
  refuseSharedNames(nodes, 1)
  return sql
}

/**
 * Two embeds of one select list under one name (`clients(*),clients(id)`, or
 * `x:clients(*),x:users(*)`) would give one key twice, the last one winning.
 * PostgREST names each embed's lateral join `<parent>_<alias or name>_<depth>`,
 * so PostgreSQL refuses the statement with 42712; the same error is given here,
 * once the rest is planned (PostgREST's other errors come first).
 */
function refuseSharedNames(nodes: readonly Node[], depth: number): void {
  const seen = new Set<string>()
  for (const node of nodes) {
    const name = node.item.alias ?? node.item.name
    if (seen.has(name)) throw restErrors.duplicateAlias(`${node.rel.table.name}_${name}_${depth}`)
    seen.add(name)
  }
  for (const node of nodes) refuseSharedNames(node.children, depth + 1)
}

/** Finds the embed a name refers to: by alias first, then by the relation's name. */
function byName(nodes: readonly Node[], name: string): Node | undefined {
  return nodes.find((n) => n.item.alias === name) ?? nodes.find((n) => n.item.alias === undefined && n.item.name === name)
}

class EmbedPlanner {
  private count = 0
  private readonly hoisted: Hoisted = { byItem: new Map(), byName: new Map() }

  constructor(
    private readonly model: RestModel,
    private readonly schema: string,
    private readonly params: Params,
    private readonly aggregates: boolean,
  ) {}

  /** Resolves every embed of a select list (and theirs) to a relationship: PGRST200 or PGRST201 before any SQL. */
  resolve(origin: Origin, items: readonly SelectItem[]): Node[] {
    const nodes: Node[] = []
    for (const item of items) {
      if (item.kind === 'column' && item.aggregate !== undefined && !this.aggregates) throw restErrors.aggregates()
      if (item.kind !== 'embed') continue
      const rel = findRelationship(this.model.relationships, this.model.tables.values(), this.schema, origin, item.name, item.hints)
      const n = ++this.count
      const node: Node = {
        item,
        rel,
        lateral: `pgrst_e${n}`,
        rows: `${rel.foreign.name}_${n}`,
        toOne: isToOne(rel),
        children: this.resolve({ name: rel.foreign.name, table: rel.foreign }, item.select),
        args: { filters: [], order: [] },
        filtering: item.inner,
        orderBy: [],
      }
      if (item.spread && !node.toOne && aggregatesIn(node)) {
        throw restErrors.notImplemented('Aggregates are not implemented for one-to-many or many-to-many spreads.')
      }
      if (item.spread && node.toOne) {
        for (const i of item.select) {
          if (!isAggregate(i)) continue
          const name = `pgrst_a${this.hoisted.byItem.size}`
          this.hoisted.byItem.set(i, name)
          this.hoisted.byName.set(name, i)
        }
      }
      nodes.push(node)
    }
    return nodes
  }

  /** Gives each embed its parameters (`a.b.col=`, `a.order=` ...): a path naming no embed of the select is PGRST108. */
  attach(roots: readonly Node[], embedParams: readonly EmbedParam[]): void {
    for (const param of embedParams) {
      let nodes = roots
      let node: Node | undefined
      for (const name of param.path) {
        node = byName(nodes, name)
        if (node === undefined) throw restErrors.notEmbedded(name)
        nodes = node.children
      }
      const args = node!.args
      if (param.kind === 'filter') args.filters.push(param.filter)
      else if (param.kind === 'order') args.order.push(...param.terms)
      else if (param.kind === 'limit') args.limit = param.value
      else args.offset = param.value
    }
  }

  /** One relation's pieces: `conditions` (a join's) go first in its where. */
  level(
    relation: { alias: string; name: string; columnType: (name: string) => string | undefined },
    nodes: readonly Node[],
    items: readonly SelectItem[],
    star: string,
    args: EmbedArgs,
    conditions: string[],
    /** A to-one spread's own level: its aggregates, and those of the spreads it lifts, go up plain. */
    lifting = false,
  ): RelationSql {
    // Related orders first: they add columns to the to-one embeds' subqueries.
    const orderTerms: string[] = []
    for (const term of args.order) {
      if (term.relation === undefined) {
        orderTerms.push(orderTermSql(fieldSql(relation.alias, term.field), term))
        continue
      }
      const node = byName(nodes, term.relation)
      if (node === undefined) throw restErrors.notEmbedded(term.relation)
      if (!node.toOne) throw restErrors.relatedOrder(relation.name, term.relation)
      node.orderBy.push(fieldSql(node.rows, term.field))
      orderTerms.push(orderTermSql(`${ident(node.lateral)}.pgrst_o${node.orderBy.length - 1}`, term))
    }
    const ctx: FilterContext = {
      alias: relation.alias,
      params: this.params,
      columnType: relation.columnType,
      embed: (name) => {
        const node = nodes.find((n) => (n.item.alias ?? n.item.name) === name)
        if (node === undefined) return undefined
        node.filtering = true
        return { marker: marker(node), name: node.item.name }
      },
    }
    const filters = args.filters.length > 0 ? whereSql(args.filters, ctx) : ''
    const where = [...conditions, ...(filters === '' ? [] : [filters])].join(' and ') || 'true'
    let filteringJoins = ''
    for (const node of nodes) if (node.filtering) filteringJoins += this.join(node, relation.alias)
    const whereParams = this.params.values.length
    let joins = filteringJoins
    for (const node of nodes) if (!node.filtering) joins += this.join(node, relation.alias)
    // With an aggregate, the other items are the groups (PostgREST's rule); an embed groups by its JSON's text.
    // The aggregates of the to-one spreads below are this level's unless it is one itself.
    const hoisted = this.hoisted
    const grouped =
      items.some((i) => isAggregate(i) && !hoisted.byItem.has(i)) || (!lifting && nodes.some((n) => n.toOne && n.item.spread && aggregatesIn(n)))
    const groups: string[] = []
    const embedItems = (item: EmbedItem) => {
      const node = nodes.find((n) => n.item === item)!
      return outputOf(node, hoisted).map(({ expr, key, aggregate }) => {
        if (aggregate) return lifting ? `${expr} as ${key}` : hoistedAggregateSql(expr, aggregate)
        if (!grouped) return `${expr} as ${key}`
        if (node.item.spread) {
          groups.push(expr)
          return `${expr} as ${key}`
        }
        groups.push(`(${expr})::text`)
        return `((${expr})::text)::json as ${key}`
      })
    }
    const list = items
      .map((item) => {
        const name = hoisted.byItem.get(item)
        if (name !== undefined) return plainSql(relation.alias, item as ColumnItem, name)
        return selectListSql(relation.alias, [item], star, embedItems, (expr) => groups.push(expr))
      })
      .filter((sql) => sql !== '')
      .join(', ')
    const groupBy = grouped && groups.length > 0 ? ` group by ${groups.join(', ')}` : ''
    return { list, where, whereParams, filteringJoins, joins, groupBy, order: orderTerms.length > 0 ? ` order by ${orderTerms.join(', ')}` : '' }
  }

  /** The lateral join of one embed, its parent's rows named `parent`. */
  private join(node: Node, parent: string): string {
    const child = node.rel.foreign
    const rows = ident(node.rows)
    let from = `${qualified(child.schema, child.name)} as ${rows}`
    let conditions: string[]
    const junction = node.rel.junction
    const computed = node.rel.computed
    if (computed) {
      // The function's rows for the parent's row (built from its columns: a write's pgrst_source has more).
      const table = node.rel.table
      const row = `row(${table.columns.map((c) => `${ident(parent)}.${ident(c.name)}`).join(', ')})::${qualified(table.schema, table.name)}`
      from = `${qualified(computed.schema, computed.name)}(${row}) as ${rows}`
      conditions = []
    } else if (junction) {
      const j = ident(`${node.lateral}_j`)
      from += ` join ${qualified(junction.table.schema, junction.table.name)} as ${j} on ${junction.target.map(([c, jc]) => `${j}.${ident(jc)} = ${rows}.${ident(c)}`).join(' and ')}`
      conditions = junction.source.map(([c, jc]) => `${j}.${ident(jc)} = ${ident(parent)}.${ident(c)}`)
    } else conditions = node.rel.columns.map(([c, fc]) => `${rows}.${ident(fc)} = ${ident(parent)}.${ident(c)}`)
    const types = new Map(child.columns.map((c) => [c.name, c.typeName]))
    const inner = this.level(
      { alias: node.rows, name: child.name, columnType: (n) => types.get(n) },
      node.children,
      node.item.select,
      `${rows}.*`,
      node.args,
      conditions,
      node.toOne && node.item.spread,
    )
    const body = `from ${from}${inner.joins} where ${inner.where}`
    const lateral = ident(node.lateral)
    const orderBy = node.orderBy.map((sql, i) => `, ${sql} as pgrst_o${i}`).join('')
    let sql: string
    if (node.toOne) {
      if (node.item.spread) sql = `select ${inner.list}${inner.list === '' ? '' : ', '}1 as pgrst_hit${orderBy} ${body}`
      else if (inner.groupBy !== '') {
        // With an aggregate the embed's row is a group (by its other items, a spread's columns among them),
        // read from a subquery: a scalar subquery could not name the grouped expressions (an embed's `::text`).
        sql = `select pg_catalog.row_to_json(pgrst_r) as body from (select ${inner.list} ${body}${inner.groupBy}) pgrst_r`
      } else sql = `select (select pg_catalog.row_to_json(pgrst_r) from (select ${inner.list}) pgrst_r) as body${orderBy} ${body}`
    } else {
      const limit = node.args.limit !== undefined ? ` limit ${this.params.rowCount(node.args.limit)}` : ''
      const offset = node.args.offset ? ` offset ${this.params.rowCount(node.args.offset)}` : ''
      const page = `(select ${inner.list} ${body}${inner.groupBy}${inner.order}${limit}${offset}) pgrst_r`
      if (node.item.spread) {
        const arrays = spreadNames(node, this.hoisted).map((n) => `coalesce(pg_catalog.json_agg(pgrst_r.${ident(n)}), '[]') as ${ident(n)}`)
        sql = `select ${arrays.map((a) => `${a}, `).join('')}case when pg_catalog.count(*) > 0 then 1 end as pgrst_hit from ${page}`
      } else sql = `select pg_catalog.json_agg(pgrst_r) as body from ${page}`
    }
    const join = node.item.inner ? 'inner join lateral' : 'left join lateral'
    return ` ${join} (${sql}) as ${lateral} on ${node.item.inner ? `${lateral}.${node.item.spread ? 'pgrst_hit' : 'body'} is not null` : 'true'}`
  }
}

/** What says whether an embed found rows: null when it found none. */
function marker(node: Node): string {
  return `${ident(node.lateral)}.${node.item.spread ? 'pgrst_hit' : 'body'}`
}

/** The parent's select items for one embed: expressions, their (quoted) keys, and the aggregate a lifted value is for. */
function outputOf(node: Node, hoisted: Hoisted): Array<{ expr: string; key: string; aggregate?: ColumnItem }> {
  const lateral = ident(node.lateral)
  if (node.item.spread) {
    return spreadNames(node, hoisted).map((n) => ({ expr: `${lateral}.${ident(n)}`, key: ident(n), aggregate: hoisted.byName.get(n) }))
  }
  if (node.item.select.length === 0) return []
  const key = ident(node.item.alias ?? node.item.name)
  return [{ expr: node.toOne ? `${lateral}.body` : `coalesce(${lateral}.body, '[]')`, key }]
}

/** The keys a spread lifts into its parent (its columns, `*` as the table's, its embeds', nested spreads', its aggregates' values). */
function spreadNames(node: Node, hoisted: Hoisted): string[] {
  const columns = node.rel.foreign.columns.map((c) => c.name)
  return node.item.select.flatMap((item) => {
    const name = hoisted.byItem.get(item)
    if (name !== undefined) return [name]
    if (item.kind !== 'embed') return outputNamesOf([item], columns)
    const child = node.children.find((n) => n.item === item)!
    return child.item.spread ? spreadNames(child, hoisted) : outputNamesOf([item], columns)
  })
}

/** Whether a to-one spread, or one it spreads in turn, has an aggregate to hoist. */
function aggregatesIn(node: Node): boolean {
  return node.item.select.some(isAggregate) || node.children.some((c) => c.toOne && c.item.spread && aggregatesIn(c))
}

/** A hoisted aggregate's value in its spread: the column (cast as asked), or 1 for `count()` (null when no row). */
function plainSql(alias: string, item: ColumnItem, name: string): string {
  if (item.field.name === '*') return `1 as ${ident(name)}`
  const field = fieldSql(alias, item.field)
  return `${item.cast ? `(${field})::${item.cast}` : field} as ${ident(name)}`
}

/** The aggregate over a spread's lifted value, keyed as it would be in place (its alias, else its name). */
function hoistedAggregateSql(expr: string, item: ColumnItem): string {
  let sql = `pg_catalog.${item.aggregate}(${expr})`
  if (item.aggregateCast) sql = `(${sql})::${item.aggregateCast}`
  return `${sql} as ${ident(item.alias ?? item.aggregate!)}`
}
