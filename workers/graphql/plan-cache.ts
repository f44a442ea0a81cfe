// Planned queries and mutations, kept beside their built schema (cache.ts SchemaEntry): a
// repeated request (the same document text, operation and variables on the
// same schema key) is answered without parsing its variables against the
// schema, collecting fields or writing SQL; it only looks its plan up.
//
// The variables' values are part of the key, not only their shape: the SQL a
// document plans to depends on values beyond the parameters they become (a
// null filter drops its condition, `first` sets the page, equal values share
// one parameter), so a plan is reused only for the values it was made with.
// Requests that inline their values, or repeat them (a feed, a page of a
// known list), hit; a lookup by ever-new ids misses and pays one stringify.
import { LRUCache } from 'lru-cache'
import type { PlannedMutation, PlannedQuery } from './execute.ts'

/** A query's one statement, or a mutation's statements. */
export type Plan = PlannedQuery | PlannedMutation

/**
 * SQL text one schema's plans may hold: as much as its documents' text
 * (document.ts), since a thread keeps up to 3,000 schemas (one per active
 * project and role) and each project's anon key chooses what fills its own.
 */
const CACHED_SQL_PER_SCHEMA = 256 * 1024
/** Variables longer than this as JSON are planned every time: their key would cost more than it saves. */
const LONGEST_VARIABLES_KEY = 2048

/** The SQL text a plan holds. */
function sqlLength(plan: Plan): number {
  if ('fields' in plan) return plan.fields.reduce((sum, field) => sum + (field.statement?.sql.length ?? 0), 0)
  return plan.data?.length ?? 0
}

export class PlanCache {
  readonly #plans = new LRUCache<string, Plan>({
    max: 500,
    maxSize: CACHED_SQL_PER_SCHEMA,
    sizeCalculation: (plan, key) => Math.max(1, key.length + sqlLength(plan)),
  })

  /** The key of a request's plan, or undefined when it is not to be cached. */
  keyOf(query: string, operationName: string | null | undefined, variables: Record<string, unknown>): string | undefined {
    let values = ''
    for (const _ in variables) {
      values = JSON.stringify(variables)
      break
    }
    if (values.length > LONGEST_VARIABLES_KEY) return undefined
    return `${operationName ?? ''}\0${values}\0${query}`
  }

  get(key: string): Plan | undefined {
    return this.#plans.get(key)
  }

  set(key: string, plan: Plan): void {
    // A plan over a quarter of the bound would push out most of the cache.
    if (key.length + sqlLength(plan) <= CACHED_SQL_PER_SCHEMA / 4) this.#plans.set(key, plan)
  }
}
