// A real nats-server (Debian's package) on a free port of 127.0.0.1, for the
// fleet's Realtime tests and bench:realtime's fleet case: a child process that
// may be stopped (SIGKILL: the bus gone at once, as when its machine dies) and
// started again on the same port, and never outlives this process.
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { freePort } from '../lib/db/embedded.ts'
import { acceptsConnections } from './accepts.ts'

/** nats-server's binary, or undefined where it is not installed. */
export function natsServerBinary(): string | undefined {
  for (const dir of ['/usr/sbin', '/usr/local/bin', '/usr/bin', ...(process.env.PATH ?? '').split(':')]) {
    const candidate = path.join(dir, 'nats-server')
    try {
      fs.accessSync(candidate, fs.constants.X_OK)
      return candidate
    } catch {}
  }
  return undefined
}

export interface RunningNats {
  port: number
  /** For BASEPLANE_NATS_URL. */
  url: string
  /** The running server's process id. */
  readonly pid: number
  /** Stops the server (SIGKILL). */
  stop(): Promise<void>
  /** Starts it again on the same port. */
  start(): Promise<void>
}

/** Starts nats-server and waits until it accepts connections. */
export async function startNats(binary: string): Promise<RunningNats> {
  const port = await freePort()
  let child: ChildProcess | undefined
  let exited: Promise<unknown> = Promise.resolve()
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await exited
  }
  const start = async () => {
    let stderr = ''
    const running = spawn(binary, ['-a', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] })
    running.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child = running
    const gone = new Promise<{ exited: number | null }>((resolve) => running.once('exit', (code) => resolve({ exited: code })))
    exited = gone
    // However this process ends, the server does not outlive it.
    const orphan = () => running.kill('SIGKILL')
    process.once('exit', orphan)
    void gone.then(() => process.off('exit', orphan))
    const deadline = Date.now() + 10_000
    for (;;) {
      const outcome = await Promise.race([acceptsConnections(port), gone])
      if (outcome === true) return
      if (typeof outcome === 'object') throw new Error(`nats-server exited with ${outcome.exited}: ${stderr}`)
      if (Date.now() > deadline) {
        await stop()
        throw new Error(`nats-server did not listen on ${port} within 10 s: ${stderr}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  await start()
  return {
    port,
    url: `nats://127.0.0.1:${port}`,
    get pid() {
      return child!.pid!
    },
    stop,
    start,
  }
}
