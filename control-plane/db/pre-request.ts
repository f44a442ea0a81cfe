// SQL of the pre-request function's check (control-plane/pre-request-check.ts),
// read in the project's database with the server's admin role: the
// functions of a name in the schemas a call of it may find, and what each of
// the API roles may do with each. Catalogue reads only: no owner code runs.
import type { Queryable } from './queryable.ts'

/** A function of the name asked for, in one of the schemas asked for. */
export interface PreRequestCandidate {
  schema: string
  /** Qualified, with its argument types, as a grant names it: `public.check(a integer)`. */
  signature: string
  /** Arguments a call must pass (those without a default): a call with none needs 0. */
  required: number
  /** pg_proc.prokind: `f` a function; `p` a procedure, `a` an aggregate, `w` a window function (not callable as `select fn()`). */
  kind: string
  /** Returns trigger or event_trigger: only a trigger can call it. */
  trigger: boolean
  /** The roles asked for that may not execute it. */
  noExecute: string[]
  /** The roles asked for without usage on its schema. */
  noUsage: string[]
}

/** The functions named `name` in `schemas`, and which of `roles` may not call them. */
export async function preRequestCandidates(db: Queryable, name: string, schemas: readonly string[], roles: readonly string[]): Promise<PreRequestCandidate[]> {
  const { rows } = await db.query<PreRequestCandidate>(
    `select n.nspname as schema, format('%I.%I(%s)', n.nspname, p.proname, pg_get_function_identity_arguments(p.oid)) as signature, p.pronargs - p.pronargdefaults as required, p.prokind::text as kind,
            p.prorettype in ('trigger'::regtype, 'event_trigger'::regtype) as trigger,
            coalesce(array_agg(r.role order by r.at) filter (where not has_function_privilege(r.role, p.oid, 'EXECUTE')), '{}') as "noExecute",
            coalesce(array_agg(r.role order by r.at) filter (where not has_schema_privilege(r.role, n.oid, 'USAGE')), '{}') as "noUsage"
       from pg_proc p
       join pg_namespace n on n.oid = p.pronamespace
      cross join unnest($3::text[]) with ordinality as r(role, at)
      where p.proname = $1 and n.nspname = any($2::text[])
      group by n.nspname, p.oid
      order by n.nspname, p.oid`,
    [name, schemas, roles],
  )
  return rows
}

/** Whether schema `name` exists. */
export async function schemaExists(db: Queryable, name: string): Promise<boolean> {
  const { rows } = await db.query<{ found: boolean }>('select exists (select from pg_namespace where nspname = $1) as found', [name])
  return rows[0]!.found
}
