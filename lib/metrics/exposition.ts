// The Prometheus text of one scrape (prom-client's formatting), written on a
// thread of its own (server/metrics.ts runs this module as a Piscina task):
// with 1,000 active projects it is some 60,000 lines, and writing them takes
// long enough (150 to 300 ms) that the main thread, which routes every
// project's requests, must not be the one doing it. The input is plain data:
// the main thread's figures packed (figures-packet.ts) and the snapshots the
// other threads reported for this scrape.
import { move } from 'piscina'
import { Counter, Gauge, Registry } from 'prom-client'
import type { ServerBudgetSnapshot } from '../db/connection-budget.ts'
import { packetSeries, type FiguresPacket } from './figures-packet.ts'
import { LATENCY_BUCKETS, SERVICES, WAIT_BUCKETS } from './project-figures.ts'
import { STATUS_CLASSES } from './recent-minutes.ts'
import { SnapshotHistogram, type HistogramSeries } from './snapshot-histogram.ts'
import type { ThreadSnapshot, TallyEntry } from './thread-tallies.ts'
import type { WorkerSnapshot } from './worker-snapshot.ts'

export interface ExpositionInput {
  /** Text that comes first (the main thread's process metrics, read there). */
  lead: string
  figures: FiguresPacket
  /** Each concern thread's snapshot for this scrape. */
  workers: Array<{ concern: string; snapshot: WorkerSnapshot }>
  /** The push actor thread's snapshot, when it answered. */
  actors: ThreadSnapshot | undefined
  servers: ServerBudgetSnapshot[]
  /** Realtime on this node, per project: open sockets, and broadcasts taken since the process started. */
  realtime?: Array<{ project: string; connections: number; messages: number }>
  /** Each thread's busy time since it started, and its share of busy time since the previous scrape. */
  threads: Array<{ thread: string; busyMillis: number; utilisation: number }>
}

/** The text as UTF-8 bytes, moved to the main thread: a 10 MB string would be copied, then flattened and encoded there. */
export default async function exposition(input: ExpositionInput): Promise<Uint8Array> {
  return move(new TextEncoder().encode(`${input.lead}\n${await expositionText(input)}`)) as Uint8Array
}

/** The text itself (the benchmark also writes it on its main thread, as the peer). */
export async function expositionText(input: ExpositionInput): Promise<string> {
  const registry = new Registry()
  const registers = [registry]
  const { figures } = input
  /** A histogram by project ref and service of one part of the figures' packet. */
  const perServiceHistogram = (name: string, help: string, buckets: readonly number[], part: 'latency' | 'waits') =>
    new SnapshotHistogram({ name, help, labelNames: ['project', 'service'], buckets, registers, read: () => perService(figures, part) })

  new Counter({
    name: 'baseplane_requests_total',
    help: 'Requests to a project answered by this process, by project ref, service and status class.',
    labelNames: ['project', 'service', 'status_class'],
    registers,
    collect() {
      for (const series of packetSeries(figures)) {
        SERVICES.forEach((service, s) => {
          STATUS_CLASSES.forEach((statusClass, c) => {
            const count = series.requests[s * STATUS_CLASSES.length + c]!
            if (count > 0) this.inc({ project: series.ref, service, status_class: statusClass }, count)
          })
        })
      }
    },
  })
  new Counter({
    name: 'baseplane_unrouted_requests_total',
    help: 'Requests naming no known project (counted apart from any ref), by status class.',
    labelNames: ['status_class'],
    registers,
    collect() {
      STATUS_CLASSES.forEach((statusClass, c) => this.inc({ status_class: statusClass }, figures.unrouted[c]!))
    },
  })
  perServiceHistogram(
    'baseplane_request_duration_seconds',
    'Time from a project request arriving to its answer being handed to the server, by project ref and service.',
    LATENCY_BUCKETS,
    'latency',
  )
  new Counter({
    name: 'baseplane_fair_share_refusals_total',
    help: "Requests refused at once (503) because their project's queue for the service was full.",
    labelNames: ['project', 'service'],
    registers,
    collect() {
      for (const series of packetSeries(figures)) {
        SERVICES.forEach((service, s) => {
          if (series.refusals[s]! > 0) this.inc({ project: series.ref, service }, series.refusals[s]!)
        })
      }
    },
  })
  perServiceHistogram(
    'baseplane_fair_share_queue_wait_seconds',
    "Time requests waited in their project's queue for a free slot (only those that waited), by project ref and service.",
    WAIT_BUCKETS,
    'waits',
  )
  new Gauge({
    name: 'baseplane_project_connections',
    help: "Connections the worker threads' pools hold to a project's database, by project ref, service and state (busy, idle).",
    labelNames: ['project', 'service', 'state'],
    registers,
    collect() {
      const sums = new Map<string, { project: string; service: string; busy: number; idle: number }>()
      for (const { concern, snapshot } of input.workers) {
        for (const [project, counts] of Object.entries(snapshot.projects)) {
          const key = `${project}\0${concern}`
          let sum = sums.get(key)
          if (sum === undefined) sums.set(key, (sum = { project, service: concern, busy: 0, idle: 0 }))
          sum.busy += counts.busy
          sum.idle += counts.idle
        }
      }
      for (const { project, service, busy, idle } of sums.values()) {
        this.set({ project, service, state: 'busy' }, busy)
        this.set({ project, service, state: 'idle' }, idle)
      }
    },
  })
  new Gauge({
    name: 'baseplane_server_connections',
    help: 'Connections this process holds (or is opening) to each database server, all worker threads together.',
    labelNames: ['server'],
    registers,
    collect() {
      for (const { server, open } of input.servers) this.set({ server }, open)
    },
  })
  new Gauge({
    name: 'baseplane_server_connection_waiters',
    help: "Requests waiting for a unit of a database server's connection budget.",
    labelNames: ['server'],
    registers,
    collect() {
      for (const { server, waiting } of input.servers) this.set({ server }, waiting)
    },
  })
  new Counter({
    name: 'baseplane_push_deliveries_total',
    help: 'Push deliveries logged by the push actors, by project ref, provider (apns, fcm, web) and outcome (sent, failed, retry, held, expired).',
    labelNames: ['project', 'provider', 'outcome'],
    registers,
    collect() {
      for (const { labels, count } of input.actors?.pushDeliveries ?? []) {
        this.inc({ project: labels[0]!, provider: labels[1]!, outcome: labels[2]! }, count)
      }
    },
  })
  new Gauge({
    name: 'baseplane_realtime_connections',
    help: 'Realtime sockets open on this node, by project ref.',
    labelNames: ['project'],
    registers,
    collect() {
      for (const { project, connections } of input.realtime ?? []) this.set({ project }, connections)
    },
  })
  new Counter({
    name: 'baseplane_realtime_messages_total',
    help: 'Realtime broadcasts this node took (from sockets and the HTTP API), by project ref.',
    labelNames: ['project'],
    registers,
    collect() {
      for (const { project, messages } of input.realtime ?? []) this.inc({ project }, messages)
    },
  })
  const mail = tallyOf(input.workers.filter((r) => r.concern === 'auth').flatMap((r) => r.snapshot.mail))
  new Counter({
    name: 'baseplane_mail_sent_total',
    help: "Auth mail sent, by template kind and delivery (smtp: handed to SMTP_URL's server; outbox: kept in the project's outbox).",
    labelNames: ['kind', 'delivery'],
    registers,
    collect() {
      for (const { labels, count } of mail) if (labels[1] !== 'smtp_failed') this.inc({ kind: labels[0]!, delivery: labels[1]! }, count)
    },
  })
  new Counter({
    name: 'baseplane_mail_failures_total',
    help: 'Auth mail the SMTP server refused or could not be reached for, by template kind.',
    labelNames: ['kind'],
    registers,
    collect() {
      for (const { labels, count } of mail) if (labels[1] === 'smtp_failed') this.inc({ kind: labels[0]! }, count)
    },
  })
  new Counter({
    name: 'baseplane_thread_busy_seconds_total',
    help: "Time each thread's event loop spent busy (not waiting for I/O) since it started: main, <concern>-<n> worker threads, push-actors.",
    labelNames: ['thread'],
    registers,
    collect() {
      for (const { thread, busyMillis } of input.threads) this.inc({ thread }, busyMillis / 1000)
    },
  })
  new Gauge({
    name: 'baseplane_thread_utilization',
    help: "Share of the time since the previous scrape each thread's event loop was busy (0 to 1).",
    labelNames: ['thread'],
    registers,
    collect() {
      for (const { thread, utilisation } of input.threads) this.set({ thread }, utilisation)
    },
  })
  return registry.metrics()
}

function* perService(figures: FiguresPacket, part: 'latency' | 'waits'): Generator<HistogramSeries> {
  for (const series of packetSeries(figures)) {
    for (let s = 0; s < SERVICES.length; s++) yield { labels: { project: series.ref, service: SERVICES[s]! }, histogram: series[part][s]! }
  }
}

/** Tally entries of several threads summed by their labels. */
function tallyOf(entries: TallyEntry[]): TallyEntry[] {
  const sums = new Map<string, TallyEntry>()
  for (const { labels, count } of entries) {
    const key = labels.join('\0')
    const sum = sums.get(key)
    if (sum === undefined) sums.set(key, { labels, count })
    else sum.count += count
  }
  return [...sums.values()]
}
