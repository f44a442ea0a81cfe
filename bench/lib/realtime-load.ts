// bench:realtime's load process: the publisher, and the parent of the
// subscriber processes, so that the closed loop (the publisher waiting on
// what the subscribers have had) runs between clients only and never
// through the process that serves the side. Asked by bench/realtime.ts to
// run a phase, it sends broadcasts either at a fixed rate or with at most
// `window` broadcasts in flight (sent, and not yet had by every subscriber),
// waits for the last one to reach everyone, and answers with the figures.
// On a fleet, the publisher is on one node and each subscriber process on one
// of the nodes (`subscriberTargets`).
import { childArg, cpuSeconds, fromParent, startChild, tellParent, type Child } from './realtime-process.ts'
import { emptyCounts, mergeCounts, type LatencyCounts } from './realtime-histogram.ts'
import { publisher, type Target } from './realtime-sockets.ts'
import type { SubscribersArg, SubscribersReport } from './realtime-subscribers.ts'
import { nowMicros } from './realtime-wire.ts'

export interface LoadArg {
  /** The publisher's target, and the subscribers' unless `subscriberTargets` is given. */
  target: Target
  /** The subscribers' targets, subscriber process i on the i-th (round robin): a fleet's nodes. */
  subscriberTargets?: Target[]
  subscribers: number
  processes: number
  payloadBytes: number
}

export interface PhaseRequest {
  type: 'phase'
  /** `rate`: `rate` broadcasts a second; `window`: as fast as the subscribers take them, at most `window` in flight. */
  mode: 'rate' | 'window'
  rate: number
  window: number
  seconds: number
}

export interface PhaseResult {
  type: 'phase'
  sent: number
  deliveries: number
  /** Deliveries every subscriber should have had: sent × subscribers. */
  expected: number
  /** From the first send to the last delivery. */
  seconds: number
  latency: LatencyCounts
  /** Each subscriber process's deliveries' latency (on a fleet, each node's subscribers'). */
  byProcess: LatencyCounts[]
  disordered: number
  lost: number
  sameBytes: boolean | undefined
  /** CPU seconds of the load process and its subscriber processes over the phase. */
  clientCpu: number
}

/** How long the last broadcast may take to reach everyone before the phase ends without it. */
const DRAIN_MS = 5000

const { target, subscriberTargets, subscribers, processes, payloadBytes } = childArg<LoadArg>()

const children: Child[] = []
const through: number[] = []
let onProgress = () => {}
for (let i = 0; i < processes; i++) {
  const count = Math.floor(subscribers / processes) + (i < subscribers % processes ? 1 : 0)
  const on = subscriberTargets?.[i % subscriberTargets.length] ?? target
  const child = startChild(new URL('./realtime-subscribers.ts', import.meta.url), { target: on, count, payloadBytes } satisfies SubscribersArg)
  through.push(-1)
  child.on<{ type: 'progress'; through: number }>('progress', (message) => {
    through[i] = message.through
    onProgress()
  })
  children.push(child)
}
const ready = await Promise.all(children.map((child) => child.next<{ type: 'ready'; retries: string[]; seconds: number }>('ready')))
const pub = await publisher(target, payloadBytes)
tellParent({ type: 'ready', retries: ready.flatMap((r) => r.retries), seconds: Math.max(...ready.map((r) => r.seconds)) })

let nextSeq = 1
const everyone = () => Math.min(...through)

function sendOne(): void {
  pub.send(nextSeq++, nowMicros())
}

/** Sends for `seconds` as the phase asks; resolves when the sending ends. */
function sendFor(request: PhaseRequest): Promise<void> {
  const start = performance.now()
  const end = start + request.seconds * 1000
  const first = nextSeq
  return new Promise((resolve) => {
    if (request.mode === 'rate') {
      // Catching up on every tick what the clock says is due keeps the rate whatever the timer's jitter.
      const timer = setInterval(() => {
        const now = performance.now()
        const due = first + Math.floor(((Math.min(now, end) - start) / 1000) * request.rate)
        while (nextSeq < due) sendOne()
        if (now >= end) {
          clearInterval(timer)
          resolve()
        }
      }, 1)
      return
    }
    const fill = () => {
      while (nextSeq - 1 - everyone() < request.window && performance.now() < end) sendOne()
    }
    onProgress = fill
    fill()
    setTimeout(() => {
      onProgress = () => {}
      resolve()
    }, request.seconds * 1000)
  })
}

async function drained(lastSeq: number): Promise<void> {
  const deadline = performance.now() + DRAIN_MS
  while (everyone() < lastSeq && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5))
}

fromParent<PhaseRequest>('phase', async (request) => {
  const fromSeq = nextSeq
  for (const child of children) child.send({ type: 'reset', fromSeq })
  await Promise.all(children.map((child) => child.next('reset')))
  const pids = [process.pid, ...children.map((child) => child.pid)]
  const cpuBefore = pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0)
  const startMicros = nowMicros()
  await sendFor(request)
  const lastSeq = nextSeq - 1
  await drained(lastSeq)
  const cpuAfter = pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0)
  for (const child of children) child.send({ type: 'report' })
  const reports = await Promise.all(children.map((child) => child.next<SubscribersReport>('report')))
  const latency = emptyCounts()
  for (const report of reports) mergeCounts(latency, report.latency)
  const sent = lastSeq - fromSeq + 1
  const result: PhaseResult = {
    type: 'phase',
    sent,
    deliveries: reports.reduce((sum, r) => sum + r.deliveries, 0),
    expected: sent * subscribers,
    seconds: (Math.max(...reports.map((r) => r.lastMicros)) - startMicros) / 1e6,
    latency,
    byProcess: reports.map((r) => r.latency),
    disordered: reports.reduce((sum, r) => sum + r.disordered, 0),
    lost: reports.reduce((sum, r) => sum + r.lost, 0),
    sameBytes: reports.find((r) => r.sameBytes !== undefined)?.sameBytes,
    clientCpu: cpuAfter - cpuBefore,
  }
  tellParent(result)
})

fromParent('stop', async () => {
  pub.close()
  for (const child of children) child.send({ type: 'stop' })
  await Promise.all(children.map((child) => child.stop()))
  process.exit(0)
})
