// The API roles' timeouts of a project (catalogue column role_timeouts):
// statement_timeout for anon, authenticated and service_role, and
// idle_in_transaction_session_timeout, shared by the CLI
// (commands/timeouts.ts) and the admin API (admin-api/timeouts.ts). Only the
// operator's overrides are stored; defaults come from lib/plans.ts. Saving
// bumps the project's catalogue version (trigger), and the operation waits
// until every data-plane process has seen it, so the next request runs with
// the new values (lib/db/request-transaction.ts sets them per transaction).
import { resolveRoleTimeouts, type StoredRoleTimeouts } from '../lib/catalogue.ts'
import { platformErrors } from '../lib/errors.ts'
import type { ControlPlane } from './control-plane.ts'
import { getProject } from './projects.ts'
import { readRoleTimeouts, updateRoleTimeouts } from './db/projects.ts'

/** The names the admin API and the stored overrides use, in display order. */
export const TIMEOUT_FIELDS = ['anon', 'authenticated', 'service_role', 'idle_in_transaction'] as const
export type TimeoutField = (typeof TIMEOUT_FIELDS)[number]

/**
 * An hour: far beyond any request an API role should make (Supabase's
 * defaults are seconds), and short enough that a forgotten setting still
 * frees its worker slot and connection the same day. 0 means no limit.
 */
export const MAX_TIMEOUT_MS = 3_600_000

const UNITS: ReadonlyArray<readonly [string, number]> = [
  ['h', 3_600_000],
  ['min', 60_000],
  ['m', 60_000],
  ['s', 1000],
  ['ms', 1],
]

/** 3000 -> "3s", 90000 -> "90s", 120000 -> "2min", 0 -> "no limit". */
export function formatTimeout(ms: number): string {
  if (ms === 0) return 'no limit'
  const [unit, size] = UNITS.find(([, size]) => ms % size === 0)!
  return `${ms / size}${unit}`
}

const DURATION = 'a duration such as 500ms, 3s, 2m or 1h (0: no limit)'
const MILLISECONDS = 'whole milliseconds or a duration such as "3s"'

/**
 * A timeout as given (milliseconds as a JSON number, or a duration string
 * with its unit), or the problem with it, naming `label` (the API field or
 * CLI flag). A bare number in a string needs its unit: "5" was once taken
 * as 5 ms where a user meant 5 seconds.
 */
export function readTimeout(value: unknown, label: string): { ms: number } | { problem: string } {
  let ms: number
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) return { problem: `${label} must be ${MILLISECONDS}, got ${value}` }
    ms = value
  } else if (typeof value === 'string') {
    const match = /^(\d+)\s*(ms|s|m|min|h)?$/.exec(value.trim())
    if (!match) return { problem: `${label} must be ${DURATION}, got "${value}"` }
    const amount = Number(match[1])
    if (match[2] === undefined && amount !== 0) return { problem: `${label} needs a unit, such as ${amount}s or ${amount}ms, got "${value}"` }
    ms = amount * UNITS.find(([unit]) => unit === (match[2] ?? 'ms'))![1]
  } else {
    return { problem: `${label} must be ${MILLISECONDS}` }
  }
  if (ms < 0) return { problem: `${label} must not be negative, got ${ms}` }
  if (ms > MAX_TIMEOUT_MS) return { problem: `${label} must be at most 1h (${MAX_TIMEOUT_MS} ms), got ${typeof value === 'string' ? `"${value}"` : value}` }
  return { ms }
}

export interface RoleTimeoutsView {
  ref: string
  /** Milliseconds, 0 for no limit. */
  anon: number
  authenticated: number
  service_role: number
  idle_in_transaction: number
  /** The fields the operator set (the others are the platform's defaults). */
  custom: TimeoutField[]
}

export function roleTimeoutsView(ref: string, stored: StoredRoleTimeouts): RoleTimeoutsView {
  const resolved = resolveRoleTimeouts(stored)
  return {
    ref,
    anon: resolved.statementTimeoutMs.anon,
    authenticated: resolved.statementTimeoutMs.authenticated,
    service_role: resolved.statementTimeoutMs.service_role,
    idle_in_transaction: resolved.idleInTransactionTimeoutMs,
    custom: TIMEOUT_FIELDS.filter((field) => stored[field] !== undefined),
  }
}

export async function getRoleTimeouts(controlPlane: ControlPlane, ref: string): Promise<RoleTimeoutsView> {
  await getProject(controlPlane, ref)
  const stored = await readRoleTimeouts(controlPlane.catalogue, ref)
  if (stored === undefined) throw platformErrors.unknownProject(ref)
  return roleTimeoutsView(ref, stored)
}

export interface RoleTimeoutsChange {
  /** New values in milliseconds; null puts a field back to its default. */
  set: Partial<Record<TimeoutField, number | null>>
  /** Drop every override first (then apply `set`). */
  reset?: boolean
}

/** Applies a checked change in one statement (no read-modify-write race) and waits until it is live. */
export async function setRoleTimeouts(controlPlane: ControlPlane, ref: string, change: RoleTimeoutsChange): Promise<RoleTimeoutsView> {
  await getProject(controlPlane, ref)
  const cleared = TIMEOUT_FIELDS.filter((field) => change.set[field] === null)
  const values = Object.fromEntries(Object.entries(change.set).filter(([, ms]) => ms !== null && ms !== undefined))
  const stored = await updateRoleTimeouts(controlPlane.catalogue, ref, { reset: change.reset === true, cleared, values })
  if (stored === undefined) throw platformErrors.unknownProject(ref)
  await controlPlane.changed()
  return roleTimeoutsView(ref, stored)
}
