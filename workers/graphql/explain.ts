// The schema's `explain` (SPEC 2.4): with the request extension `explain:
// true`, each statement the request runs, its parameters and the plan
// PostgreSQL has for it, under `extensions.explain`. The plan is `EXPLAIN
// (FORMAT JSON)` of the very statement (for a query, of its prepared
// statement with the request's parameters: the plan that runs), on the same
// connection, as the same role, in the same transaction, just before the
// statement runs: a statement that then fails still has its plan in the
// answer. Without ANALYZE nothing is executed twice, a mutation included.
import type pg from 'pg'

export interface ExplainedStatement {
  /** The statement's text; a query's values are its `$n` parameters. */
  sql: string
  /** Text forms of its parameters, $1 first (a mutation carries literals: none). */
  params: (string | null)[]
  /** EXPLAIN's JSON document: `{"Plan": {...}}`. */
  plan: unknown
}

export function explainSql(statement: string): string {
  return `explain (format json) ${statement}`
}

/** The plan of an EXPLAIN (FORMAT JSON) result. */
export function planOf(result: pg.QueryResult): unknown {
  const value = result.rows[0]?.['QUERY PLAN'] as unknown
  const document = typeof value === 'string' ? JSON.parse(value) : value
  return Array.isArray(document) ? document[0] : document
}

/** Whether the request asks for `name` (`extensions.<name>: true`). */
export function asks(extensions: unknown, name: 'explain' | 'schemaReport'): boolean {
  return typeof extensions === 'object' && extensions !== null && (extensions as Record<string, unknown>)[name] === true
}
