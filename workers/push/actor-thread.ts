// Runs the push actor host on a thread of its own. Sending is thousands of
// HTTP/2 streams a second; on the data plane's main thread it would take the
// time that routing every other request needs (DESIGN.md: the main thread
// parses, authenticates and routes). The thread is supervised: if it dies, its
// connections (and the claims of its open batches) go with it, and it is
// started again under the same node id, so it takes its leases back at once
// rather than waiting for them to lapse.
import { Worker } from 'node:worker_threads'
import { log, logLevel } from '../../lib/log.ts'
import type { ThreadSnapshot } from '../../lib/metrics/thread-tallies.ts'
import type { PushActorHost, PushActorHostOptions } from './actor-host.ts'
import { fromSource, threadExecArgv, stopThread, threadModule, threadsFromBuild } from '../../lib/thread-module.ts'
import { newNodeId } from '../../lib/leases/lease-keeper.ts'

/** The host's options that cross to the thread (plain data: no shared token cache, no callbacks). */
export type PushActorThreadOptions = Omit<PushActorHostOptions, 'tokens' | 'onClaimsChanged'>

export interface PushActorThread extends PushActorHost {
  /** Ends the thread at once, as a crash would; unless the host is stopping, it is started again. */
  terminate(): Promise<void>
  /** The thread's busy time and delivery tally (the metrics); undefined when it does not answer within `timeoutMillis`. */
  snapshot(timeoutMillis: number): Promise<ThreadSnapshot | undefined>
  /** The latest snapshot the thread sent; after stop(), the one it sent as it ended (its final tally). */
  lastSnapshot(): ThreadSnapshot | undefined
}

/** What the thread tells its parent (actor-thread-main.ts). */
export type ActorThreadMessage =
  | { kind: 'ready' }
  | { kind: 'failed'; message: string }
  | { kind: 'claims'; refs: string[] }
  | { kind: 'snapshot'; id: number; snapshot: ThreadSnapshot }

/** What the parent asks of the thread. */
export type ActorThreadRequest = { kind: 'stop' } | { kind: 'snapshot'; id: number }

// The thread's entry, actor-thread-main.js or .ts (lib/thread-module.ts); the
// .ts file is imported by a plain JS launcher that registers tsx (see there).
const ENTRY = threadModule('./actor-thread-main', import.meta.url)
const LAUNCHER = new URL('./actor-thread-launcher.mjs', import.meta.url)
const RESTART_MS = 1000
// The host settles open batches for up to 5 s per actor when it stops.
const STOP_CEILING_MS = 15000

export async function startPushActorThread(threadOptions: PushActorThreadOptions): Promise<PushActorThread> {
  // One node id for every thread this process starts in turn (see the top of this file).
  const options: PushActorThreadOptions = { ...threadOptions, nodeId: threadOptions.nodeId ?? newNodeId() }
  let claims: string[] = []
  let stopping = false
  let current: Worker | undefined
  let restart: NodeJS.Timeout | undefined
  let asked = 0
  let latest: ThreadSnapshot | undefined
  const snapshots = new Map<number, (snapshot: ThreadSnapshot | undefined) => void>()

  const spawn = () =>
    new Promise<void>((resolve, reject) => {
      const env = { ...process.env, BASEPLANE_LOG_LEVEL: logLevel() }
      const worker = fromSource && !threadsFromBuild
        ? new Worker(LAUNCHER, { argv: [ENTRY.href], workerData: options, env })
        : new Worker(ENTRY, { workerData: options, env, execArgv: threadExecArgv })
      current = worker
      let started = false
      worker.on('message', (message: ActorThreadMessage) => {
        if (message.kind === 'claims') claims = message.refs
        else if (message.kind === 'snapshot') {
          latest = message.snapshot
          snapshots.get(message.id)?.(message.snapshot)
        }
        else if (message.kind === 'ready') {
          started = true
          resolve()
        } else reject(new Error(message.message))
      })
      worker.on('error', (err) => {
        if (!started) reject(err)
        else log.error('push actor thread failed', err)
      })
      worker.on('exit', (code) => {
        if (current === worker) current = undefined
        claims = []
        if (!started) return reject(new Error(`the push actor thread exited (code ${code}) before it started`))
        if (stopping) return
        log.error('push actor thread exited; starting it again', undefined, { code })
        restart = setTimeout(() => void spawn().catch((err) => log.error('push actor thread did not start again', err)), RESTART_MS)
      })
    })

  await spawn()
  return {
    claimed: () => claims,
    lastSnapshot: () => latest,
    async terminate() {
      await current?.terminate()
    },
    snapshot(timeoutMillis) {
      const worker = current
      if (!worker) return Promise.resolve(undefined)
      const id = ++asked
      return new Promise((resolve) => {
        const timer = setTimeout(() => answer(undefined), timeoutMillis)
        const answer = (snapshot: ThreadSnapshot | undefined) => {
          clearTimeout(timer)
          snapshots.delete(id)
          resolve(snapshot)
        }
        snapshots.set(id, answer)
        worker.postMessage({ kind: 'snapshot', id } satisfies ActorThreadRequest)
      })
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
