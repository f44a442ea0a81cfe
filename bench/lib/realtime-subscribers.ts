// A subscriber process of bench:realtime (started by realtime-load.ts):
// `count` sockets on the side's channel, each delivery's latency counted
// from the send time in its payload. It tells its parent, at most every
// millisecond, the last broadcast every one of its sockets has had
// ("through"), which is what the publisher's closed loop waits on.
import { childArg, fromParent, tellParent } from './realtime-process.ts'
import { addLatency, emptyCounts, type LatencyCounts } from './realtime-histogram.ts'
import { subscribe, type Subscriber, type Target } from './realtime-sockets.ts'
import { nowMicros, tickPayload, userBroadcast } from './realtime-wire.ts'

export interface SubscribersArg {
  target: Target
  count: number
  payloadBytes: number
}

/** What a subscriber process counted in a phase. */
export interface SubscribersReport {
  type: 'report'
  deliveries: number
  /** Deliveries of a broadcast at or before one the socket already had (none expected: each socket's order is the send order). */
  disordered: number
  latency: LatencyCounts
  /** The last delivery's time (µs, nowMicros). */
  lastMicros: number
  /** Sockets that ended during the run. */
  lost: number
  /** Whether the first frame compared was the bytes Baseplane sends for it (undefined where none was compared). */
  sameBytes: boolean | undefined
}

/** Sockets opened at once while connecting (a thousand at once overflow the server's accept backlog). */
const CONNECTING_AT_ONCE = 25
const PROGRESS_MS = 1

const { target, count, payloadBytes } = childArg<SubscribersArg>()
const last = new Float64Array(count).fill(-1)
let fromSeq = Number.MAX_SAFE_INTEGER
let deliveries = 0
let disordered = 0
let latency = emptyCounts()
let lastMicros = 0
let lost = 0
let sameBytes: boolean | undefined

function delivered(index: number, seq: number, sent: number, frame: Uint8Array | undefined): void {
  const now = nowMicros()
  if (seq <= last[index]!) disordered++
  last[index] = seq
  if (seq < fromSeq) return
  deliveries++
  lastMicros = now
  addLatency(latency, now - sent)
  if (sameBytes === undefined && frame !== undefined) {
    sameBytes = Buffer.from(userBroadcast(JSON.stringify(tickPayload(seq, sent, payloadBytes)))).equals(frame)
  }
}

const sockets: Subscriber[] = []
const retries: string[] = []
const started = Date.now()
for (let next = 0; next < count; ) {
  const batch = []
  for (; next < count && batch.length < CONNECTING_AT_ONCE; next++) {
    const index = next
    batch.push(subscribe(target, (tick, frame) => delivered(index, tick.seq, tick.sent, frame), () => lost++))
  }
  for (const subscriber of await Promise.all(batch)) {
    sockets.push(subscriber)
    retries.push(...subscriber.retries)
  }
}
tellParent({ type: 'ready', retries, seconds: (Date.now() - started) / 1000 })

// Told only during a phase: between phases (while another side is measured) this process stays asleep.
let told = -1
let progress: NodeJS.Timeout | undefined
function tellProgress(): void {
  let through = Infinity
  for (let i = 0; i < count; i++) if (last[i]! < through) through = last[i]!
  if (through !== told) {
    told = through
    tellParent({ type: 'progress', through })
  }
}

fromParent<{ type: 'reset'; fromSeq: number }>('reset', (message) => {
  fromSeq = message.fromSeq
  deliveries = 0
  disordered = 0
  latency = emptyCounts()
  progress ??= setInterval(tellProgress, PROGRESS_MS)
  tellParent({ type: 'reset' })
})

fromParent('report', () => {
  clearInterval(progress)
  progress = undefined
  const report: SubscribersReport = { type: 'report', deliveries, disordered, latency, lastMicros, lost, sameBytes }
  tellParent(report)
})

fromParent('stop', () => {
  for (const socket of sockets) socket.close()
  process.exit(0)
})
