// Quotas by plan (issue 27 item 3), as the operator sees and sets them: a
// project's quotas (its plan's, with the operator's overrides), what it used
// this month, and the fleet's watch over them (`watchQuotas`, run by one node
// a minute through the usage jobs): each crossing of 80% and 100% is recorded
// once a month, logged and appended as a `quota.crossed` event (which the
// operator webhook posts), and a capped project whose database reached its
// size figure is made read-only for its API roles and its owner until a
// sample is under it again. The other caps are enforced in the project's own
// database where the truth is (lib/plans.ts).
import type { Plan } from '../lib/catalogue.ts'
import { platformErrors } from '../lib/errors.ts'
import { log } from '../lib/log.ts'
import { monthDateOf } from '../lib/metrics/usage-counters.ts'
import {
  effectiveQuotas,
  planQuotas,
  isLevelQuota,
  isSizeQuota,
  QUOTA_NAMES,
  QUOTA_POLICIES,
  quotaCaps,
  quotaResetsAt,
  type QuotaName,
  type QuotaOverrides,
  type QuotaPolicy,
  type Quotas,
} from '../lib/plans.ts'
import type { ControlPlane } from './control-plane.ts'
import { appendEvent } from './events.ts'
import { withClient } from './project-database.ts'
import { storageUsage } from './storage-admin.ts'
import { getProject } from './projects.ts'
import { syncProjectPushCap } from './push-cap.ts'
import { usageMonth } from './usage.ts'
import * as db from './db/quotas.ts'
import { withPoolTransaction } from '../lib/db/request-transaction.ts'

/** A project's quotas as the admin API, the CLI and the dashboard show them. */
export interface QuotaView extends Quotas {
  ref: string
  plan: Plan
  /** The plan's own quotas, before the overrides. */
  plan_quotas: Quotas
  /** What the operator set for this project (absent keys: the plan's). */
  overrides: QuotaOverrides
  /** The UTC month the figures below are of, and when it ends (the monthly quotas reset). */
  month: string
  resets_at: string
  /** This month's use per quota, as the fleet recorded it (database size: the latest sample; null before one). */
  used: Record<QuotaName, number | null>
  /** Past its database size cap: writes of the API roles and the owner are refused. */
  read_only: boolean
}

/** The project's quotas and its month so far (the function the dashboard's Usage page calls as well). */
export async function projectQuotas(controlPlane: ControlPlane, ref: string, now = Date.now()): Promise<QuotaView> {
  const project = await getProject(controlPlane, ref)
  const month = usageMonth(undefined, now)
  const [row] = await db.quotaUsage(controlPlane.catalogue, month.firstDay, month.nextFirstDay, ref)
  if (row === undefined) throw platformErrors.unknownProject(ref)
  return {
    ref,
    plan: project.plan,
    ...effectiveQuotas(project.plan, row.quotaOverrides),
    plan_quotas: planQuotas(project.plan),
    overrides: row.quotaOverrides,
    month: month.month,
    resets_at: quotaResetsAt(now).toISOString(),
    // Storage's size is read from the project's own record of its blobs (control-plane/storage-admin.ts), the truth its cap is enforced on.
    used: { ...row.used, storage_size_bytes: await storageUsage(controlPlane, ref).then((usage) => usage.bytes, () => null) },
    read_only: row.readOnly,
  }
}

/** A change: a policy (null: the plan's), and per quota a figure, null for the plan's, or 'unlimited' for none. */
export interface QuotaChange {
  policy?: QuotaPolicy | null
  figures?: Partial<Record<QuotaName, number | null | 'unlimited'>>
}

const SIZE = /^(\d+)\s*(B|KB|MB|GB|TB)$/i
const SIZE_UNITS: Record<string, number> = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 }

/** A figure as given: a whole number, "unlimited", null, or for the database size "500MB" / "8GB". */
export function readQuotaFigure(name: QuotaName, value: unknown): number | null | 'unlimited' {
  if (value === null || value === 'unlimited') return value
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value
  if (typeof value === 'string' && /^\d+$/.test(value.trim()) && Number.isSafeInteger(Number(value))) return Number(value)
  const size = isSizeQuota(name) && typeof value === 'string' ? SIZE.exec(value.trim()) : null
  if (size !== null) return Number(size[1]) * SIZE_UNITS[size[2]!.toUpperCase()]!
  const sizes = isSizeQuota(name) ? ', a size such as 500MB or 8GB' : ''
  throw platformErrors.invalidArgument(`${name} must be a whole number of at least 0${sizes}, "unlimited" (no quota) or null (the plan's), got ${JSON.stringify(value)?.slice(0, 40)}`, name)
}

/** The admin API's body, `{policy?, <quota>?...}`, checked whole before anything is saved. */
export function quotaChangeFromBody(body: Record<string, unknown>): QuotaChange {
  const known = new Set<string>(['policy', ...QUOTA_NAMES])
  const unknown = Object.keys(body).find((key) => !known.has(key))
  if (unknown !== undefined) throw platformErrors.invalidArgument(`Unknown quota "${unknown.slice(0, 40)}": use policy, ${QUOTA_NAMES.join(', ')}`, unknown)
  const change: QuotaChange = { figures: {} }
  if ('policy' in body) {
    const policy = body.policy
    if (policy !== null && !(QUOTA_POLICIES as readonly unknown[]).includes(policy)) {
      throw platformErrors.invalidArgument(`policy must be "bill" (count, never refuse), "cap" (refuse past a figure) or null (the plan's), got ${JSON.stringify(policy)?.slice(0, 40)}`, 'policy')
    }
    change.policy = policy as QuotaPolicy | null
  }
  for (const name of QUOTA_NAMES) if (name in body) change.figures![name] = readQuotaFigure(name, body[name])
  if (change.policy === undefined && Object.keys(change.figures!).length === 0) {
    throw platformErrors.invalidArgument(`Give at least one of policy, ${QUOTA_NAMES.join(', ')} (null puts one back to the plan's)`)
  }
  return change
}

function applyChange(overrides: QuotaOverrides, change: QuotaChange): QuotaOverrides {
  const next: QuotaOverrides = { ...overrides, figures: { ...overrides.figures } }
  if (change.policy === null) delete next.policy
  else if (change.policy !== undefined) next.policy = change.policy
  for (const [name, figure] of Object.entries(change.figures ?? {}) as Array<[QuotaName, number | null | 'unlimited']>) {
    if (figure === null) delete next.figures![name]
    else next.figures![name] = figure === 'unlimited' ? null : figure
  }
  if (Object.keys(next.figures!).length === 0) delete next.figures
  return next
}

/**
 * Saves the project's overrides and waits until every node has them; the
 * push deliveries cap is written into the project's database at once (the
 * fan-out trigger enforces it there).
 */
export async function setQuotaOverrides(controlPlane: ControlPlane, ref: string, change: QuotaChange): Promise<QuotaView> {
  const project = await getProject(controlPlane, ref)
  await withPoolTransaction(controlPlane.catalogue, async (client) => {
    const current = await client.query<{ quota_overrides: QuotaOverrides }>('select quota_overrides from baseplane.projects where ref = $1 for update', [ref])
    if (current.rows[0] === undefined) throw platformErrors.unknownProject(ref)
    await db.writeQuotaOverrides(client, ref, applyChange(current.rows[0].quota_overrides, change))
  })
  await controlPlane.changed()
  await syncProjectPushCap(controlPlane, await getProject(controlPlane, project.ref))
  return projectQuotas(controlPlane, ref)
}

/** Crossings of these shares of a figure are noticed (once a month each). */
const STEPS = [80, 100] as const

export interface QuotaWatch {
  /** Crossings recorded now (each also an event). */
  notices: db.QuotaNotice[]
  /** Projects made read-only, and made writable again. */
  readOnly: string[]
  writable: string[]
}

/**
 * The fleet's watch over the quotas, run by one node at a time: records the
 * crossings of 80% and 100% not yet recorded this month (bill or cap alike:
 * the host bills or warns from them), and turns read-only on or off where a
 * capped project's latest database size sample crossed its figure.
 */
export async function watchQuotas(controlPlane: ControlPlane, now = Date.now()): Promise<QuotaWatch> {
  const month = usageMonth(undefined, now)
  const rows = await db.quotaUsage(controlPlane.catalogue, month.firstDay, month.nextFirstDay)
  const crossings: db.QuotaNotice[] = []
  const flips: Array<{ row: db.QuotaUsageRow; readOnly: boolean }> = []
  const egress: Array<{ ref: string; capped: boolean }> = []
  for (const row of rows) {
    const quotas = effectiveQuotas(row.plan as Plan, row.quotaOverrides)
    for (const quota of QUOTA_NAMES) {
      const figure = quotas.figures[quota]
      const used = row.used[quota]
      if (figure === null || used === null || figure === 0) continue
      for (const percent of STEPS) if (used * 100 >= figure * percent) crossings.push({ ref: row.ref, quota, percent, used, figure })
    }
    const sizeCap = quotaCaps(quotas).database_size_bytes
    const size = row.used.database_size_bytes
    const readOnly = sizeCap !== undefined && size !== null && size >= sizeCap
    if (readOnly !== row.readOnly) flips.push({ row, readOnly })
    const egressCap = quotaCaps(quotas).storage_egress_bytes
    const egressCapped = egressCap !== undefined && row.used.storage_egress_bytes! >= egressCap
    if (egressCapped !== row.storageEgressCapped) egress.push({ ref: row.ref, capped: egressCapped })
  }
  const notices = await withPoolTransaction(controlPlane.catalogue, async (client) => {
    const recorded = await db.insertQuotaNotices(client, monthDateOf(now), crossings)
    const byRef = new Map(rows.map((row) => [row.ref, row]))
    for (const notice of recorded) {
      const row = byRef.get(notice.ref)!
      const quotas = effectiveQuotas(row.plan as Plan, row.quotaOverrides)
      await appendEvent(client, 'quota.crossed', notice.ref, {
        quota: notice.quota,
        percent: notice.percent,
        used: notice.used,
        figure: notice.figure,
        policy: quotas.policy,
        month: month.month,
        resets_at: isLevelQuota(notice.quota) ? null : quotaResetsAt(now).toISOString(),
      })
    }
    return recorded
  })
  for (const notice of notices) log.info('a project crossed a share of its quota', { ...notice, month: month.month })
  const watch: QuotaWatch = { notices, readOnly: [], writable: [] }
  for (const { row, readOnly } of flips) {
    try {
      await setOwnerReadOnly(controlPlane, row, readOnly)
      await db.setReadOnly(controlPlane.catalogue, row.ref, readOnly)
      ;(readOnly ? watch.readOnly : watch.writable).push(row.ref)
      log.info(readOnly ? 'a project reached its database size cap: read-only for its API roles and owner' : 'a project is under its database size cap again: writable', { ref: row.ref, bytes: row.used.database_size_bytes })
    } catch (error) {
      log.info('could not change a project\'s read-only mode; trying again at the next watch', { ref: row.ref, error: (error as Error).message })
    }
  }
  for (const { ref, capped } of egress) {
    await db.setStorageEgressCapped(controlPlane.catalogue, ref, capped)
    log.info(capped ? "a project reached its storage egress cap: its downloads are refused until the month resets" : 'a project is under its storage egress cap again', { ref })
  }
  if (flips.length > 0 || egress.length > 0) await controlPlane.changed()
  return watch
}

/**
 * The owner's own connections (its developers' psql, migrations): read-only by
 * default past the size cap, as Supabase does; a developer may still `set
 * default_transaction_read_only = off` in a session to delete what is too much.
 */
async function setOwnerReadOnly(controlPlane: ControlPlane, row: db.QuotaUsageRow, readOnly: boolean): Promise<void> {
  const serverUrl = await controlPlane.serverUrl(row.dbServer)
  const role = row.dbOwnerRole.replaceAll('"', '""')
  await withClient(serverUrl, (client) => client.query(`alter role "${role}" ${readOnly ? 'set default_transaction_read_only = on' : 'reset default_transaction_read_only'}`))
}

