// A real nats-server (Debian's package) for the fleet's Realtime tests: a child
// process on a free port of its own, which a test may stop and start again on
// the same port (the bus going away and coming back), stopped when the test ends.
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { freePort } from '../../lib/db/embedded.ts'

interface TestContext {
  teardown(fn: () => unknown): void
}

/** nats-server's binary, or undefined where it is not installed (the tests that need it skip, saying so). */
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
  /** Stops the server (SIGKILL: the bus is gone at once, as when its machine dies). */
  stop(): Promise<void>
  /** Starts it again on the same port. */
  start(): Promise<void>
}

export async function startNats(t: TestContext, binary: string): Promise<RunningNats> {
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
    const deadline = Date.now() + 10_000
    for (;;) {
      const outcome = await Promise.race([connects(port), gone])
      if (outcome === true) return
      if (typeof outcome === 'object') throw new Error(`nats-server exited with ${outcome.exited}: ${stderr}`)
      if (Date.now() > deadline) throw new Error(`nats-server did not listen on ${port} within 10 s: ${stderr}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  t.teardown(stop)
  await start()
  return { port, url: `nats://127.0.0.1:${port}`, stop, start }
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}
