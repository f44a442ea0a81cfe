// How a project's data API ends a request's transaction (PostgREST's
// `db-tx-end`), set by the operator on the project's row
// (sql/catalogue/0023_rest_tx_end_and_plans.sql). In lib/ because the control
// plane checks a value before saving it and the REST worker ends its
// transactions by what was saved, and both must read it alike; the values,
// their meanings and the refusals are declared here once for the admin API,
// the CLI and the dashboard.
import { platformErrors } from './errors.ts'

/** PostgREST's four values, the default first. */
export const TX_END_VALUES = ['commit', 'commit-allow-override', 'rollback', 'rollback-allow-override'] as const

export type TxEnd = (typeof TX_END_VALUES)[number]

export const DEFAULT_TX_END: TxEnd = 'commit'

/** What each value does, as the CLI, the admin API's docs and the dashboard say it. */
export const TX_END_MEANINGS: Record<TxEnd, string> = {
  commit: 'every transaction is committed; Prefer: tx= is ignored',
  'commit-allow-override': 'committed unless the request says Prefer: tx=rollback (supabase-js .rollback())',
  rollback: 'every transaction is rolled back, nothing is ever kept; Prefer: tx= is ignored',
  'rollback-allow-override': 'rolled back unless the request says Prefer: tx=commit',
}

/**
 * A value as given (a JSON value): one of TX_END_VALUES. A refusal is the
 * platform's invalid_argument concerning `field`, its message starting with
 * `label` (the API field, a CLI flag, a form's label).
 */
export function readTxEnd(value: unknown, field = 'tx_end', label = field): TxEnd {
  if (typeof value !== 'string' || !(TX_END_VALUES as readonly string[]).includes(value)) {
    const shown = JSON.stringify(value)?.slice(0, 40) ?? String(value)
    throw platformErrors.invalidArgument(`${label} must be one of ${TX_END_VALUES.join(', ')}, got ${shown}`, field)
  }
  return value as TxEnd
}

/** A value as typed on a command line or in a form (any case, surrounding spaces dropped). */
export function txEndFromText(text: string, field = 'tx_end', label = field): TxEnd {
  const typed = text.trim().toLowerCase()
  return readTxEnd(typed === '' ? text : typed, field, label)
}

/**
 * How a request's transaction ends under `setting` when it prefers
 * `preferred` (Prefer: tx=commit|rollback): the preference counts only where
 * the setting allows an override (and is then echoed in Preference-Applied,
 * as PostgREST's: `honoured`), otherwise the setting's own end holds.
 */
export function transactionEnd(setting: TxEnd, preferred: 'commit' | 'rollback' | undefined): { rollback: boolean; honoured: 'commit' | 'rollback' | undefined } {
  const overridable = setting === 'commit-allow-override' || setting === 'rollback-allow-override'
  const honoured = overridable ? preferred : undefined
  const rollback = (honoured ?? (setting.startsWith('rollback') ? 'rollback' : 'commit')) === 'rollback'
  return { rollback, honoured }
}
