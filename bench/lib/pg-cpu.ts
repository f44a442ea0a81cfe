// The CPU time of one PostgreSQL server's processes, from /proc (Linux): the
// postmaster, every process it started (backends, walsenders, background
// workers) and those of its children that have exited (the postmaster's
// cutime and cstime: the kernel adds a child's time there when it is reaped),
// so that a backend ending between two readings still counts. Other
// PostgreSQL servers on the machine (other work's) are left out. Each live
// process is put under a kind by its process title ("postgres: walsender
// ...", "postgres: <user> <database> ..."), as `kindOf` says.
import fs from 'node:fs'
import pg from 'pg'

const TICKS_PER_SECOND = 100 // USER_HZ: the unit of /proc's utime, stime, cutime and cstime on Linux

/** Seconds of CPU by kind, and in all. */
export interface PgCpu {
  total: number
  kinds: Record<string, number>
}

/** The server's postmaster: the parent of a backend of it. */
export async function postmasterOf(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid
    return Number(statFields(pid)![1])
  } finally {
    await client.end()
  }
}

/** /proc/<pid>/stat's fields from the state on (field 3), or undefined where the process is gone. */
function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

function title(pid: string): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0+/g, ' ').trim()
  } catch {
    return ''
  }
}

/**
 * The server's CPU so far. `kindOf` names a live process's kind from its
 * title; the postmaster itself and the exited children count as `other`.
 * Undefined where there is no /proc.
 */
export function pgCpu(postmaster: number, kindOf: (title: string) => string): PgCpu | undefined {
  const own = statFields(postmaster)
  if (!own) return undefined
  // utime stime cutime cstime are fields 14 to 17, 11 to 14 here.
  const other = (Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])) / TICKS_PER_SECOND
  const kinds: Record<string, number> = { other }
  let total = other
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const fields = statFields(entry)
    if (!fields || Number(fields[1]) !== postmaster) continue
    const spent = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
    const kind = kindOf(title(entry))
    kinds[kind] = (kinds[kind] ?? 0) + spent
    total += spent
  }
  return { total, kinds }
}

/** `after` less `before`, kind by kind (a kind with no process left in `after` has its time in `other` there). */
export function pgCpuSince(before: PgCpu, after: PgCpu): PgCpu {
  const kinds: Record<string, number> = {}
  for (const kind of new Set([...Object.keys(before.kinds), ...Object.keys(after.kinds)])) kinds[kind] = (after.kinds[kind] ?? 0) - (before.kinds[kind] ?? 0)
  return { total: after.total - before.total, kinds }
}

/** `from` added into `into`. */
export function addPgCpu(into: PgCpu, from: PgCpu): void {
  into.total += from.total
  for (const [kind, seconds] of Object.entries(from.kinds)) into.kinds[kind] = (into.kinds[kind] ?? 0) + seconds
}
