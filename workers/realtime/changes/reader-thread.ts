// Runs the node's change readers on a thread of their own: decoding a busy
// project's WAL must not take the main thread's time from routing and from
// the sockets (DESIGN.md). Supervised as push's actor thread is: if it dies,
// its replication connections end (and PostgreSQL drops their temporary slots
// with them), and it is started again under the same node id, told again
// which projects this node wants, so it takes their leases back at once.
import { Worker } from 'node:worker_threads'
import { log, logLevel } from '../../../lib/log.ts'
import { fromSource, threadExecArgv, stopThread, threadModule, threadsFromBuild } from '../../../lib/thread-module.ts'
import type { ChangeBatch, ReaderStatus, ReaderThreadMessage, ReaderThreadRequest } from './messages.ts'
import type { ReaderHostOptions } from './reader-host.ts'

export interface ReaderThreadEvents {
  batch(batch: ChangeBatch): void
  status(status: ReaderStatus): void
}

export interface ChangeReaders {
  /** This node has sockets of `ref`: a reader must exist somewhere (here, if the lease is free). */
  want(ref: string): void
  unwant(ref: string): void
  /** Ends the thread at once, as a crash would; it is started again (tests). */
  terminate(): Promise<void>
  stop(): Promise<void>
}

const ENTRY = threadModule('./reader-thread-main', import.meta.url)
// The launcher that registers tsx in a thread started from source: push's, which does nothing else.
const LAUNCHER = new URL('../../push/actor-thread-launcher.mjs', import.meta.url)
const RESTART_MS = 1000
const STOP_CEILING_MS = 10000

export async function startChangeReaders(options: ReaderHostOptions, events: ReaderThreadEvents): Promise<ChangeReaders> {
  const wanted = new Set<string>()
  let current: Worker | undefined
  let stopping = false
  let restart: NodeJS.Timeout | undefined
  const ask = (request: ReaderThreadRequest) => current?.postMessage(request)

  const spawn = () =>
    new Promise<void>((resolve, reject) => {
      const env = { ...process.env, BASEPLANE_LOG_LEVEL: logLevel() }
      const worker = fromSource && !threadsFromBuild
        ? new Worker(LAUNCHER, { argv: [ENTRY.href], workerData: options, env })
        : new Worker(ENTRY, { workerData: options, env, execArgv: threadExecArgv })
      current = worker
      let started = false
      worker.on('message', (message: ReaderThreadMessage) => {
        if (message.kind === 'batch') events.batch(message.batch)
        else if (message.kind === 'status') events.status(message.status)
        else if (message.kind === 'ready') {
          started = true
          for (const ref of wanted) worker.postMessage({ kind: 'want', ref } satisfies ReaderThreadRequest)
          resolve()
        } else reject(new Error(message.message))
      })
      worker.on('error', (err) => {
        if (!started) reject(err)
        else log.error('realtime change reader thread failed', err)
      })
      worker.on('exit', (code) => {
        if (current === worker) current = undefined
        // Its readers are gone with it: their subscribers hear "Subscribed" again once a reader streams.
        for (const ref of wanted) events.status({ ref, state: 'stopped' })
        if (!started) return reject(new Error(`the realtime change reader thread exited (code ${code}) before it started`))
        if (stopping) return
        log.error('realtime change reader thread exited; starting it again', undefined, { code })
        restart = setTimeout(() => void spawn().catch((err) => log.error('realtime change reader thread did not start again', err)), RESTART_MS)
      })
    })

  await spawn()
  return {
    want(ref) {
      if (wanted.has(ref)) return
      wanted.add(ref)
      ask({ kind: 'want', ref })
    },
    unwant(ref) {
      if (!wanted.delete(ref)) return
      ask({ kind: 'unwant', ref })
    },
    async terminate() {
      await current?.terminate()
    },
    async stop() {
      stopping = true
      clearTimeout(restart)
      const worker = current
      if (!worker) return
      await stopThread(worker, STOP_CEILING_MS)
    },
  }
}
