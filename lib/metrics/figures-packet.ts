// ProjectFigures copied into one Float64Array, for the thread that writes the
// exposition text (exposition.ts): the main thread only copies numbers (about
// a millisecond for 1,000 projects) and transfers the buffer, so the text of
// tens of thousands of series is never built where requests are routed.
import { LATENCY_BUCKETS, SERVICES, WAIT_BUCKETS, type Histogram, type ProjectFigures } from './project-figures.ts'
import { STATUS_CLASSES } from './recent-minutes.ts'

/** A histogram as the exposition reads it: counts per bucket (the last one past every bound), their sum and count. */
export interface HistogramFigures {
  counts: ArrayLike<number>
  sum: number
  count: number
}

/** One project's figures as read back from a packet. */
export interface PacketSeries {
  ref: string
  /** requests[service * 4 + status class] */
  requests: Float64Array
  refusals: Float64Array
  latency: HistogramFigures[]
  waits: HistogramFigures[]
}

export interface FiguresPacket {
  refs: string[]
  /** Buffers of their own, so the main thread can transfer them instead of copying. */
  data: Float64Array<ArrayBuffer>
  unrouted: Float64Array<ArrayBuffer>
}

const REQUESTS = SERVICES.length * STATUS_CLASSES.length
const LATENCY = LATENCY_BUCKETS.length + 1 + 2
const WAITS = WAIT_BUCKETS.length + 1 + 2
const STRIDE = REQUESTS + SERVICES.length + SERVICES.length * (LATENCY + WAITS)

function writeHistogram(data: Float64Array, at: number, width: number, histogram: Histogram | undefined): void {
  if (histogram === undefined) return
  data.set(histogram.counts, at)
  data[at + width - 2] = histogram.sum
  data[at + width - 1] = histogram.count
}

function readHistogram(data: Float64Array, at: number, width: number): HistogramFigures {
  return { counts: data.subarray(at, at + width - 2), sum: data[at + width - 2]!, count: data[at + width - 1]! }
}

export function packFigures(figures: ProjectFigures): FiguresPacket {
  const all = [...figures.series()]
  const data = new Float64Array(all.length * STRIDE)
  all.forEach((series, i) => {
    let at = i * STRIDE
    data.set(series.requests, at)
    at += REQUESTS
    data.set(series.refusals, at)
    at += SERVICES.length
    for (let s = 0; s < SERVICES.length; s++, at += LATENCY) writeHistogram(data, at, LATENCY, series.latency[s])
    for (let s = 0; s < SERVICES.length; s++, at += WAITS) writeHistogram(data, at, WAITS, series.waits[s])
  })
  return { refs: all.map((series) => series.ref), data, unrouted: Float64Array.from(figures.unrouted) }
}

export function* packetSeries(packet: FiguresPacket): Generator<PacketSeries> {
  const { data } = packet
  for (let i = 0; i < packet.refs.length; i++) {
    let at = i * STRIDE
    const requests = data.subarray(at, (at += REQUESTS))
    const refusals = data.subarray(at, (at += SERVICES.length))
    const latency: HistogramFigures[] = []
    for (let s = 0; s < SERVICES.length; s++, at += LATENCY) latency.push(readHistogram(data, at, LATENCY))
    const waits: HistogramFigures[] = []
    for (let s = 0; s < SERVICES.length; s++, at += WAITS) waits.push(readHistogram(data, at, WAITS))
    yield { ref: packet.refs[i]!, requests, refusals, latency, waits }
  }
}
