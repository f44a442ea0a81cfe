// The fleet's usage upkeep (issue 27 item 1), each job by one node at a time:
// every node asks on its timer which jobs are due (one statement,
// db/usage.ts claimDueJobs) and runs those it claimed. `rollup` (every
// minute) moves the minutes that are over into the hours and days and deletes
// them; `retention` (hourly) deletes what is older than the configured months;
// `database_sizes` (BASEPLANE_USAGE_SIZE_SAMPLE_MS) samples every project's
// pg_database_size, one connection and one query per database server; `quotas`
// (every minute, and after each sample) is quotas.ts watchQuotas. A job
// that fails is logged and tried again when it is next due.
import { log } from '../lib/log.ts'
import { minuteOf } from '../lib/metrics/usage-counters.ts'
import type { ControlPlane } from './control-plane.ts'
import { claimDueJobs, databaseSizes, projectDatabases, pruneBefore, rollUpMinutes, upsertDatabaseSizes, upsertStorageSizes, type Pruned, type RolledUp } from './db/usage.ts'
import { adminUrlFor } from '../lib/db/server-url.ts'
import { storedBytesOf } from '../workers/storage/face.ts'
import { withClient } from './project-database.ts'
import { watchQuotas } from './quotas.ts'

export interface UsageUpkeepSettings {
  retentionMonths: number
  hourlyRetentionMonths: number
  sizeSampleMillis: number
}

/** Seconds between two runs of a job, fleet-wide. */
export function jobPeriods(settings: Pick<UsageUpkeepSettings, 'sizeSampleMillis'>): Record<string, number> {
  return { rollup: 60, retention: 3600, database_sizes: settings.sizeSampleMillis / 1000, quotas: 60 }
}

/** Claims the due jobs for `holder` (a node's id) and runs them; answers the jobs it ran. */
export async function runDueUsageJobs(controlPlane: ControlPlane, holder: string, settings: UsageUpkeepSettings, now = Date.now()): Promise<string[]> {
  const jobs = await claimDueJobs(controlPlane.catalogue, holder, jobPeriods(settings))
  for (const job of jobs) {
    try {
      if (job === 'rollup') await rollUpUsage(controlPlane, now)
      else if (job === 'retention') await pruneUsage(controlPlane, settings, now)
      else if (job === 'database_sizes') {
        await sampleDatabaseSizes(controlPlane, new Date(now))
        // A size cap applies from the sample that crossed it, not a watch later.
        await watchQuotas(controlPlane, now)
      } else if (job === 'quotas') await watchQuotas(controlPlane, now)
    } catch (error) {
      log.error('a usage job failed; it runs again when next due', error, { job })
    }
  }
  return jobs
}

/** Rolls up every minute before the one holding `now` (the current minute is still being counted). */
export async function rollUpUsage(controlPlane: ControlPlane, now = Date.now()): Promise<RolledUp> {
  return rollUpMinutes(controlPlane.catalogue, new Date(minuteOf(now)))
}

/** The first day of the month `months - 1` before the one holding `now` (UTC): keeping `months` months, the current one included. */
export function retentionStart(now: number, months: number): Date {
  const at = new Date(now)
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() - (months - 1), 1))
}

/** Deletes hourly rows past `hourlyRetentionMonths`, and daily rows, active users and sizes past `retentionMonths`. */
export async function pruneUsage(controlPlane: ControlPlane, settings: Pick<UsageUpkeepSettings, 'retentionMonths' | 'hourlyRetentionMonths'>, now = Date.now()): Promise<Pruned> {
  const pruned = await pruneBefore(
    controlPlane.catalogue,
    retentionStart(now, settings.hourlyRetentionMonths),
    retentionStart(now, settings.retentionMonths).toISOString().slice(0, 10),
  )
  if (pruned.hours + pruned.days + pruned.activeUsers + pruned.sizes > 0) log.info('usage past its retention deleted', { ...pruned })
  return pruned
}

/**
 * Samples every project's database size, server by server (one connection,
 * one query each), and records them at `at`. A server that does not answer
 * is skipped until the next sample. Answers the projects sampled.
 */
export async function sampleDatabaseSizes(controlPlane: ControlPlane, at = new Date()): Promise<number> {
  const projects = await projectDatabases(controlPlane.catalogue)
  const servers = new Map<string, Array<{ ref: string; database: string }>>()
  for (const { ref, server, database } of projects) {
    let list = servers.get(server)
    if (list === undefined) servers.set(server, (list = []))
    list.push({ ref, database })
  }
  const refs: string[] = []
  const bytes: number[] = []
  for (const [server, list] of servers) {
    try {
      const sizes = await withClient(await controlPlane.serverUrl(server), (client) => databaseSizes(client, list.map((p) => p.database)))
      for (const { ref, database } of list) {
        const size = sizes.get(database)
        if (size !== undefined) {
          refs.push(ref)
          bytes.push(size)
        }
      }
    } catch (error) {
      log.info('could not sample the database sizes of a server; trying again at the next sample', { server, error: (error as Error).message })
    }
  }
  if (refs.length > 0) await upsertDatabaseSizes(controlPlane.catalogue, refs, bytes, at)
  await sampleStorageSizes(controlPlane, projects, at)
  return refs.length
}

/**
 * Samples every project's stored bytes (Storage's record of its blobs in the
 * project's own database: one short connection each, so a sample of many
 * projects takes a while, once a sample period). A project whose database does
 * not answer is skipped until the next sample.
 */
export async function sampleStorageSizes(controlPlane: ControlPlane, projects: Array<{ ref: string; server: string; database: string }>, at = new Date()): Promise<number> {
  const refs: string[] = []
  const bytes: number[] = []
  for (const { ref, server, database } of projects) {
    try {
      const stored = await withClient(adminUrlFor(await controlPlane.serverUrl(server), database), (client) => storedBytesOf(client))
      refs.push(ref)
      bytes.push(stored)
    } catch (error) {
      log.debug('could not sample a project\'s stored bytes; trying again at the next sample', { ref, error: (error as Error).message })
    }
  }
  if (refs.length > 0) await upsertStorageSizes(controlPlane.catalogue, refs, bytes, at)
  return refs.length
}
