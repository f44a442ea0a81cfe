// bench:realtime's broadcast sides under load (the fan-out and fleet cases):
// a side is a server (one process, or a fleet's nodes and its bus) and a load
// process (lib/realtime-load.ts: the publisher and the subscriber processes).
// A phase asks the load process for broadcasts at a fixed rate or in a closed
// loop and adds the CPU the side's server processes spent meanwhile; rounds
// take the sides in turn, the first side moving on each round, so that other
// work on the machine falls on every side alike. Also the table the cases
// print a side's figures in.
import { mergeCounts, percentileMs, type LatencyCounts } from './realtime-histogram.ts'
import type { LoadArg, PhaseRequest, PhaseResult } from './realtime-load.ts'
import { cpuSeconds, machineTicks, startChild, type Child } from './realtime-process.ts'
import type { Target } from './realtime-sockets.ts'

/** A side's server: where its clients connect, the processes whose CPU is its cost, and how it stops. */
export interface Served {
  target: Target
  /** Where the subscriber processes connect, one each in turn (a fleet's nodes); `target` when absent. */
  subscriberTargets?: Target[]
  pids: number[]
  stop(): Promise<void>
}

/** A phase's figures over its rounds. */
export interface Measured {
  /** Each round's deliveries a second, and its p99 (ms). */
  rounds: number[]
  roundsP99: number[]
  deliveries: number
  expected: number
  seconds: number
  latency: LatencyCounts
  /** Each subscriber process's deliveries' latency. */
  byProcess: LatencyCounts[]
  disordered: number
  lost: number
  sameBytes: boolean | undefined
  clientCpu: number
  serverCpu: number
  /** The machine's CPU ticks (all cores) over the phase: busy with anything, and in all. */
  busyTicks: number
  totalTicks: number
}

/** A side connected: its server, and the load process holding its publisher and subscribers. */
export interface Running {
  name: string
  served: Served
  load: Child
  connected: { retries: string[]; seconds: number }
  fixed?: Measured
  saturated?: Measured
}

/** Starts the side's load process on `served` and waits until every subscriber is on its channel. */
export async function connect(name: string, served: Served, load: Omit<LoadArg, 'target' | 'subscriberTargets'>): Promise<Running> {
  const arg: LoadArg = { target: served.target, ...(served.subscriberTargets ? { subscriberTargets: served.subscriberTargets } : {}), ...load }
  const child = startChild(new URL('./realtime-load.ts', import.meta.url), arg)
  const connected = await child.next<{ type: 'ready'; retries: string[]; seconds: number }>('ready')
  return { name, served, load: child, connected }
}

/** The load process stopped (its sockets closed). */
export async function disconnect(running: Running): Promise<void> {
  running.load.send({ type: 'stop' })
  await running.load.stop()
}

const serverCpu = (served: Served) => served.pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0)

export async function phase(running: Running, request: Omit<PhaseRequest, 'type'>, into?: Measured): Promise<Measured> {
  const before = serverCpu(running.served)
  const machine = machineTicks()
  running.load.send({ type: 'phase', ...request })
  const result = await running.load.next<PhaseResult>('phase')
  const after = machineTicks()
  const measured: Measured = {
    ...result,
    rounds: [result.deliveries / result.seconds],
    roundsP99: [percentileMs(result.latency, 0.99)],
    serverCpu: serverCpu(running.served) - before,
    busyTicks: after.busy - machine.busy,
    totalTicks: after.total - machine.total,
  }
  if (into === undefined) return measured
  mergeCounts(into.latency, measured.latency)
  measured.byProcess.forEach((counts, i) => mergeCounts(into.byProcess[i]!, counts))
  for (const key of ['deliveries', 'expected', 'seconds', 'disordered', 'clientCpu', 'serverCpu', 'busyTicks', 'totalTicks'] as const) into[key] += measured[key]
  into.rounds.push(...measured.rounds)
  into.roundsP99.push(...measured.roundsP99)
  into.lost = measured.lost // counted since the sockets opened
  into.sameBytes ??= measured.sameBytes
  return into
}

/** Each side in turn, `count` times, the first side of a round moving on each time: a side is never measured only while the machine is busier. */
export async function rounds(sides: Running[], request: Omit<PhaseRequest, 'type'>, store: 'fixed' | 'saturated', count: number): Promise<void> {
  for (let round = 0; round < count; round++) {
    for (let i = 0; i < sides.length; i++) {
      const running = sides[(round + i) % sides.length]!
      running[store] = await phase(running, { ...request, seconds: request.seconds / count }, running[store])
    }
  }
}

/** "socket closed: 1006 ×3, ..." */
export function tally(reasons: string[]): string {
  const counts = new Map<string, number>()
  for (const reason of reasons) counts.set(reason, (counts.get(reason) ?? 0) + 1)
  return [...counts].map(([reason, n]) => `${reason} ×${n}`).join(', ')
}

/** "  Baseplane: 1000 subscribed in 1.0 s (3 opened again ...)" */
export function connectedLine(running: Running, subscribers: number): string {
  const { retries, seconds } = running.connected
  return `  ${running.name}: ${subscribers} subscribed in ${seconds.toFixed(1)} s${retries.length ? ` (${retries.length} opened again after ending as they opened: ${tally(retries)})` : ''}`
}

export const perSecond = (m: Measured) => m.deliveries / m.seconds
const µsPer = (cpu: number, m: Measured) => ((cpu * 1e6) / m.deliveries).toFixed(2)
/** A side's figures for the run's report (bench/lib/report.ts): what its table line shows, as numbers. */
export function measuredFigures(m: Measured): Record<string, number> {
  return {
    deliveriesPerSecond: perSecond(m),
    deliveredShare: m.deliveries / m.expected,
    p50Ms: percentileMs(m.latency, 0.5),
    p99Ms: percentileMs(m.latency, 0.99),
    maxMs: percentileMs(m.latency, 1),
    serverCpuUsPerDelivery: (m.serverCpu * 1e6) / m.deliveries,
    clientCpuUsPerDelivery: (m.clientCpu * 1e6) / m.deliveries,
    lostSockets: m.lost,
  }
}

export const thousands = (n: number) => Math.round(n).toLocaleString('en-US')

/** A side's line under HEADER; `offered`: deliveries a second a fixed rate offers (marks a rate not sustained). */
export function row(name: string, m: Measured, offered?: number, width = 11): string {
  const notes = []
  if (offered !== undefined && perSecond(m) < 0.9 * offered) notes.push('rate not sustained')
  if (m.deliveries < m.expected) notes.push(`${thousands(m.expected - m.deliveries)} deliveries lost`)
  if (m.lost > 0) notes.push(`${m.lost} sockets lost`)
  if (m.disordered > 0) notes.push(`${m.disordered} out of order`)
  return [
    `  ${name.padEnd(width)}`,
    thousands(perSecond(m)).padStart(13),
    `${((100 * m.deliveries) / m.expected).toFixed(2)}%`.padStart(10),
    percentileMs(m.latency, 0.5).toFixed(2).padStart(8),
    percentileMs(m.latency, 0.99).toFixed(2).padStart(8),
    percentileMs(m.latency, 1).toFixed(1).padStart(8),
    µsPer(m.serverCpu, m).padStart(12),
    µsPer(m.clientCpu, m).padStart(12),
    `${((100 * m.busyTicks) / m.totalTicks).toFixed(0)}%`.padStart(14),
    notes.length ? `  (${notes.join(', ')})` : '',
  ].join('')
}

export const header = (width = 11) =>
  `  ${'side'.padEnd(width)}${'deliveries/s'.padStart(13)}${'delivered'.padStart(10)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'max ms'.padStart(8)}${'server µs'.padStart(12)}${'clients µs'.padStart(12)}${'machine busy'.padStart(14)}`
