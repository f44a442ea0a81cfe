// bench:realtime's broadcast fan-out case: `subscribers` subscribers on one
// public channel (vsn 2.0.0, joined with phx_join) and one publisher sending
// realtime-js's kind 3 broadcast frames, each payload carrying its send time;
// messages delivered per second across all subscribers, and the latency from
// send to receipt. In the same run, the same clients against a bare
// uWebSockets.js server publishing the same bytes (the limit) and against
// socket.io 4 (socket.io-client subscribers in a room).
//
// Each side's server runs apart from its clients: Baseplane in this process
// (the run's throwaway platform), the peers in a process each; the publisher
// and the subscriber processes (the `ws` package reading frames in place, or
// socket.io-client) in a load process of their own (realtime-load.ts). Every
// side is connected first; then, after a warm-up, two phases, each in
// `rounds` rounds that take the sides in turn (so that other work on the
// machine falls on every side alike): a fixed rate every side sustains
// (latency under the same load), then a closed loop with at most `window`
// broadcasts in flight (the most the machine delivers with a bounded backlog:
// saturation). Broadcast touches no database.
import { createProject } from '../../control-plane/projects.ts'
import type { BenchPlatform } from './platform.ts'
import { ensureInstalled } from './peers.ts'
import { onCleanUp, startChild } from './realtime-process.ts'
import { connect, connectedLine, disconnect, header, measuredFigures, perSecond, phase, rounds, row, thousands, type Running, type Served } from './realtime-rounds.ts'
import type { Side } from './realtime-sockets.ts'
import { median } from './stats.ts'
import { reportCase } from './report.ts'

export interface FanoutOptions {
  seconds: number
  rate: number
  window: number
  subscribers: number
  processes: number
  payloadBytes: number
  rounds: number
  sides: Side[]
}

export const FANOUT_SIDES: Record<Side, string> = { baseplane: 'Baseplane', uws: 'bare uWS', socketio: 'socket.io' }
const WARM_SECONDS = 2

async function serveBaseplane(bench: BenchPlatform): Promise<Served> {
  // The business plan: 10,000 sockets and 2,500 broadcasts a second (lib/plans.ts REALTIME_LIMITS); the free
  // plan's 200 sockets and 100 broadcasts a second would refuse most of the subscribers and close the publisher.
  const project = await createProject(bench.platform.controlPlane, { name: 'realtime bench', plan: 'business' })
  const socket = `${bench.origin.replace(/^http/, 'ws')}/project/${project.ref}/realtime/v1/websocket`
  return {
    target: { side: 'baseplane', url: `${socket}?apikey=${project.anonKey}&vsn=2.0.0`, token: project.anonKey },
    pids: [process.pid],
    stop: async () => {},
  }
}

async function servePeer(side: 'uws' | 'socketio'): Promise<Served> {
  const module = side === 'uws' ? './realtime-uws-server.ts' : './realtime-socketio-server.ts'
  const child = startChild(new URL(module, import.meta.url), null)
  const { port } = await child.next<{ type: 'listening'; port: number }>('listening')
  return { target: { side, url: `${side === 'uws' ? 'ws' : 'http'}://127.0.0.1:${port}` }, pids: [child.pid], stop: () => child.stop() }
}

/** Runs the case on `bench` (Baseplane's side) and prints its figures and ratios. */
export async function runFanout(bench: BenchPlatform, options: FanoutOptions): Promise<void> {
  if (options.sides.includes('socketio')) ensureInstalled()
  console.log(
    `broadcast fan-out: ${options.subscribers} subscribers on one channel (vsn 2.0.0 frames), 1 publisher, ${options.payloadBytes}-byte JSON payloads, ` +
      `${options.processes} subscriber processes a side, ${options.rounds} rounds a phase`,
  )
  const sides: Running[] = []
  const stops: Array<() => Promise<void>> = []
  try {
    for (const side of options.sides) {
      const served = side === 'baseplane' ? await serveBaseplane(bench) : await servePeer(side)
      stops.push(onCleanUp(served.stop))
      const running = await connect(FANOUT_SIDES[side], served, { subscribers: options.subscribers, processes: options.processes, payloadBytes: options.payloadBytes })
      // The clients go before their server.
      stops.push(onCleanUp(() => disconnect(running)))
      sides.push(running)
      console.log(connectedLine(running, options.subscribers))
    }
    for (const running of sides) await phase(running, { mode: 'rate', rate: options.rate, window: 0, seconds: WARM_SECONDS })
    await rounds(sides, { mode: 'rate', rate: options.rate, window: 0, seconds: options.seconds }, 'fixed', options.rounds)
    await rounds(sides, { mode: 'window', rate: 0, window: options.window, seconds: options.seconds }, 'saturated', options.rounds)
  } finally {
    for (const stop of stops.reverse()) await stop()
  }

  const { rate, seconds, window, subscribers } = options
  console.log(`fixed rate: ${rate} broadcasts/s for ${seconds} s a side (${thousands(rate * subscribers)} deliveries/s offered), after ${WARM_SECONDS} s of warm-up`)
  console.log(header())
  for (const { name, fixed } of sides) console.log(row(name, fixed!, rate * subscribers))
  console.log(`saturation: a closed loop, at most ${window} broadcasts in flight (sent and not yet had by every subscriber), ${seconds} s a side`)
  console.log(header())
  for (const { name, saturated } of sides) console.log(row(name, saturated!))
  console.log("  (server µs, clients µs: CPU a delivery, every thread, of the server's process and of the publisher's and subscribers' processes)")

  const compared = sides.filter((r) => r.name !== FANOUT_SIDES.socketio)
  const same = compared.map((r) => r.saturated!.sameBytes)
  if (same.length > 0) console.log(`  ${compared.map((r) => r.name).join(' and ')}: the subscribers received the bytes Baseplane sends: ${same.every((s) => s === true) ? 'yes' : 'NO'}`)

  const ours = sides.find((r) => r.name === FANOUT_SIDES.baseplane)?.saturated
  for (const [side, goal, atLeast] of [
    ['uws', 'goal >= 0.8', 0.8],
    ['socketio', 'goal >= 3', 3],
  ] as const) {
    const peer = sides.find((r) => r.name === FANOUT_SIDES[side])?.saturated
    if (!ours || !peer) continue
    // Rounds of the two sides run close together: their ratio round by round is less at the mercy of whatever
    // else the machine does than the ratio of the totals.
    const byRound = ours.rounds.map((r, i) => r / peer.rounds[i]!)
    const cpu = ours.serverCpu / ours.deliveries / (peer.serverCpu / peer.deliveries)
    console.log(
      `ratio Baseplane / ${FANOUT_SIDES[side]}, deliveries/s at saturation: ${median(byRound).toFixed(2)}x (${goal}), the median of the rounds' ` +
        `(${byRound.map((r) => r.toFixed(2)).join(', ')}; of the totals ${(perSecond(ours) / perSecond(peer)).toFixed(2)}x); server CPU a delivery: ${cpu.toFixed(2)}x`,
    )
    reportCase({
      suite: 'realtime', case: `fanout: Baseplane / ${FANOUT_SIDES[side]}, deliveries/s at saturation`, figures: measuredFigures(ours), peer: FANOUT_SIDES[side],
      peerFigures: measuredFigures(peer), ratio: median(byRound), what: 'deliveries/s, the median of the rounds\' ratios', runs: byRound, goal: { atLeast },
    })
  }
}
