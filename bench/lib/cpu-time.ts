// CPU time spent while a load runs, read from /proc (Linux): this process's
// main thread, its other threads (worker threads, and the GC and libuv
// helpers beside them), and every PostgreSQL process. Divided by the
// requests answered, it shows where a request's CPU goes on each side of a
// comparison; on a machine without /proc it reads nothing and says so.
import fs from 'node:fs'
import os from 'node:os'

const TICKS_PER_SECOND = 100 // USER_HZ: the unit of /proc's utime and stime on Linux

interface CpuReading {
  main: number
  others: number
  postgres: number
}

/** Spent CPU time (seconds) by place, summed over the loads measured. */
export class CpuTime {
  readonly #total: CpuReading = { main: 0, others: 0, postgres: 0 }
  #requests = 0

  /** Runs `load`, adding the CPU it cost and the requests it reports. */
  async measure<T extends { requests: number }>(load: () => Promise<T>): Promise<T> {
    const before = read()
    const result = await load()
    const after = read()
    if (before && after) {
      this.#total.main += after.main - before.main
      this.#total.others += after.others - before.others
      this.#total.postgres += after.postgres - before.postgres
      this.#requests += result.requests
    }
    return result
  }

  /** "main 145, other threads 201, PostgreSQL 137 µs a request", or why there is nothing. */
  describe(): string {
    if (this.#requests === 0) return os.platform() === 'linux' ? 'no requests measured' : 'not measured (needs /proc)'
    const each = (seconds: number) => ((seconds * 1e6) / this.#requests).toFixed(0)
    return `main thread ${each(this.#total.main)}, other threads ${each(this.#total.others)}, PostgreSQL ${each(this.#total.postgres)} µs CPU a request`
  }
}

/** utime + stime in seconds from a /proc stat file (fields 14 and 15; the name before them may hold spaces). */
function ticksOf(file: string): number {
  const stat = fs.readFileSync(file, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
}

function read(): CpuReading | undefined {
  try {
    const pid = process.pid
    let main = 0
    let others = 0
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      const spent = safe(() => ticksOf(`/proc/${pid}/task/${tid}/stat`))
      if (Number(tid) === pid) main = spent
      else others += spent
    }
    let postgres = 0
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue
      if (safe(() => fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim()) === 'postgres') postgres += safe(() => ticksOf(`/proc/${entry}/stat`))
    }
    return { main, others, postgres }
  } catch {
    return undefined
  }
}

/** A process or thread may end between listing and reading: it then counts as nothing. */
function safe<T extends number | string>(readIt: () => T): T | 0 {
  try {
    return readIt()
  } catch {
    return 0
  }
}
