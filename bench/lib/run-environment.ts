// What a benchmark report says about where it ran: the machine, Node, the
// PostgreSQL server the suites used and the commit, so that figures from two
// reports are compared knowing what differed.
import { execFile, execFileSync } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

const ROOT = path.resolve(import.meta.dirname, '../..')

export interface Machine {
  cpuModel: string
  cpus: number
  memoryBytes: number
  /** os.type() and os.version(): "Linux", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.x". */
  os: string
  /** os.release(): the kernel's version. */
  kernel: string
  arch: string
  /** The 1, 5 and 15 minute load averages when the run started: a busy machine's figures are not a quiet one's. */
  loadAverage: number[]
}

export interface Commit {
  /** `git rev-parse HEAD`; undefined outside a git checkout. */
  hash?: string
  branch?: string
  /** Whether the checkout had changes not committed (`git status --porcelain`, untracked files included). */
  dirty?: boolean
}

export interface Postgres {
  /** `select version()` on the server the suites used. */
  version?: string
  /** DATABASE_URL's server, or the embedded PostgreSQL each suite starts for itself (the same build for every suite). */
  server: 'DATABASE_URL' | 'embedded'
  /** Why the version could not be read, when it could not. */
  error?: string
}

export function machine(): Machine {
  const cpus = os.cpus()
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cpus: cpus.length,
    memoryBytes: os.totalmem(),
    os: `${os.type()} ${os.version()}`,
    kernel: os.release(),
    arch: os.arch(),
    loadAverage: os.loadavg().map((n) => Math.round(n * 100) / 100),
  }
}

function git(...args: string[]): string | undefined {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return undefined
  }
}

export function commit(): Commit {
  const hash = git('rev-parse', 'HEAD')
  if (hash === undefined) return {}
  const status = git('status', '--porcelain')
  return { hash, branch: git('rev-parse', '--abbrev-ref', 'HEAD'), dirty: status === undefined ? undefined : status !== '' }
}

/**
 * The version of the server the suites use: DATABASE_URL's, or else that of a
 * temporary embedded server started and stopped for it (each suite starts its own
 * from the same build, as it does when run alone); asked in a child process
 * (bench/lib/postgres-version.ts says why).
 */
export async function postgres(): Promise<Postgres> {
  const server = process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded'
  try {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'postgres-version.ts')], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 })
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as Postgres
  } catch (error) {
    return { server, error: (error as Error).message }
  }
}
