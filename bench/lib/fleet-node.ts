// A data-plane node for bench:fleet: the real command line (`baseplane start
// --no-demo`, from the checkout through tsx) in a child process of its own, on
// a catalogue given as DATABASE_URL, with a home of its own (one start per
// home). Its log lines (JSON on stderr) are kept, so the benchmark can say
// whether PostgreSQL refused connections.
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { freePort } from '../../lib/db/embedded.ts'
import { storageRootOf } from '../../dev/node-config.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
/** A node compiles through tsx, connects, upgrades the projects' databases and listens; a busy 2-core machine is slow at all of it. */
const START_TIMEOUT_MS = 90_000
/** The command line drains for up to 10 s (cli/commands/start.ts DRAIN_MS); past this, the node is killed. */
const STOP_TIMEOUT_MS = 30_000

export interface FleetNode {
  name: string
  pid: number
  origin: string
  /** Log lines (stderr) so far that match `pattern`. */
  linesMatching(pattern: RegExp): string[]
  /** kill -9, SIGSTOP, SIGCONT: as an operator's or the kernel's signal, nothing more. */
  signal(signal: NodeJS.Signals): void
  /** SIGCONT first (a stopped process cannot drain), then SIGTERM, and waits for the exit. */
  stop(): Promise<void>
  exited: Promise<void>
}

/**
 * The storage folder every node of one catalogue shares (dev/node-config.ts's): a fleet on local disk must
 * share it, and a node whose folder differs from the running nodes' refuses to start. Each node's own
 * home would give each its own.
 */
export const sharedStorage = (catalogueUrl: string): Record<string, string> => ({ BASEPLANE_STORAGE_ROOT: storageRootOf(catalogueUrl) })

export async function startFleetNode(name: string, databaseUrl: string, env: Record<string, string> = {}): Promise<FleetNode> {
  const port = await freePort()
  const home = fs.mkdtempSync(path.join(os.tmpdir(), `bp-bench-fleet-${name}-`))
  const child: ChildProcess = spawn(process.execPath, ['dist/cli/main.js', 'start', '--no-demo'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), BASEPLANE_HOME: home, BASEPLANE_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: string[] = []
  let output = ''
  let partial = ''
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
  child.stderr!.on('data', (chunk: Buffer) => {
    const text = partial + chunk.toString('utf8')
    const parts = text.split('\n')
    partial = parts.pop()!
    lines.push(...parts)
  })
  const exited = new Promise<void>((resolve) =>
    child.on('exit', () => {
      fs.rmSync(home, { recursive: true, force: true })
      resolve()
    }),
  )
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node ${name} did not start within ${START_TIMEOUT_MS} ms:\n${output}${lines.join('\n')}`)), START_TIMEOUT_MS)
    const ready = () => {
      if (!output.includes('Press Ctrl-C to stop.')) return
      clearTimeout(timer)
      child.stdout!.off('data', ready)
      resolve()
    }
    child.stdout!.on('data', ready)
    void exited.then(() => {
      clearTimeout(timer)
      reject(new Error(`node ${name} exited before it served:\n${output}${lines.join('\n')}`))
    })
  })
  let stopping: Promise<void> | undefined
  return {
    name,
    pid: child.pid!,
    origin: `http://127.0.0.1:${port}`,
    linesMatching: (pattern) => lines.filter((line) => pattern.test(line)),
    signal: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    },
    stop: () =>
      (stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return
        child.kill('SIGCONT')
        child.kill('SIGTERM')
        const late = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS)
        await exited
        clearTimeout(late)
      })()),
    exited,
  }
}
