// Whether a project's data API answers plans (PostgREST's `db-plan-enabled`):
// `Accept: application/vnd.pgrst.plan[+json|+text]` answers the EXPLAIN of
// the request's statement, off by default as PostgREST's since a plan names
// the project's tables, indexes and policies' conditions. Set by the operator
// on the project's row (sql/catalogue/0023_rest_tx_end_and_plans.sql); in lib/
// because the control plane checks a value before saving it and the REST
// worker reads what was saved, and the admin API, the CLI and the dashboard
// take it alike.
import { platformErrors } from './errors.ts'

/** A value as given (a JSON value): true or false. A refusal is invalid_argument concerning `field`, its message starting with `label`. */
export function readPlans(value: unknown, field = 'plans', label = field): boolean {
  if (typeof value !== 'boolean') {
    const shown = JSON.stringify(value)?.slice(0, 40) ?? String(value)
    throw platformErrors.invalidArgument(`${label} must be true or false, got ${shown}`, field)
  }
  return value
}

/** A value as typed on a command line or in a form: true or false, as every switch of the CLI takes. */
export function plansFromText(text: string, field = 'plans', label = field): boolean {
  const typed = text.trim().toLowerCase()
  if (typed === 'true') return true
  if (typed === 'false') return false
  throw platformErrors.invalidArgument(`${label} must be true or false, got ${JSON.stringify(text.slice(0, 40))}`, field)
}
