// A real nats-server (Debian's package) for bench:realtime's fleet case: a
// child process on a free port, stopped with the run. (The same idea as the
// fleet tests' test/helpers/nats.ts, which the benches do not import.)
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { freePort } from '../../lib/db/embedded.ts'

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
  pid: number
  /** For BASEPLANE_NATS_URL. */
  url: string
  stop(): Promise<void>
}

/** Starts nats-server on a free port of 127.0.0.1 and waits until it accepts connections. */
export async function startNats(binary: string): Promise<RunningNats> {
  const port = await freePort()
  let stderr = ''
  const child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] })
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const gone = new Promise<{ exited: number | null }>((resolve) => child.once('exit', (code) => resolve({ exited: code })))
  // However this process ends, the server does not outlive it.
  const orphan = () => child.kill('SIGKILL')
  process.once('exit', orphan)
  void gone.then(() => process.off('exit', orphan))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await gone
  }
  const deadline = Date.now() + 10_000
  for (;;) {
    const outcome = await Promise.race([connects(port), gone])
    if (outcome === true) break
    if (typeof outcome === 'object') throw new Error(`nats-server exited with ${outcome.exited}: ${stderr}`)
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`nats-server did not listen on ${port} within 10 s: ${stderr}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { pid: child.pid!, url: `nats://127.0.0.1:${port}`, stop }
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
