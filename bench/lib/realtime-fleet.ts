// bench:realtime's fleet case: broadcast across three nodes through NATS. A
// real nats-server (Debian's /usr/sbin/nats-server; the case is skipped,
// saying so, where it is missing) and three data-plane nodes, each a real
// `baseplane start` in a process of its own (lib/fleet-node.ts) on one
// catalogue with BASEPLANE_NATS_URL; the subscribers split evenly over the
// three nodes (a subscriber process per node), one publisher on node A at a
// fixed rate: node A delivers to its own sockets and publishes each broadcast
// once on NATS, B and C deliver it to theirs. The peer, in the same run: one
// node (a `baseplane start` too, on a catalogue of its own, no bus: a node
// without BASEPLANE_NATS_URL cannot join a fleet that has one) with the same
// subscribers (as many subscriber processes) and the same rate. Both are
// connected first, then warmed up until a warm-up phase reaches every
// subscriber (the nodes' NATS subscriptions are in place: steady state), then
// measured in rounds that take the two in turn (lib/realtime-rounds.ts).
import { ControlPlane } from '../../control-plane/control-plane.ts'
import { createProject } from '../../control-plane/projects.ts'
import type { ProjectRecord } from '../../lib/catalogue.ts'
import { dropCatalogue } from '../../dev/db.ts'
import { sharedStorage, startFleetNode, type FleetNode } from './fleet-node.ts'
import { natsServerBinary, startNats } from '../../dev/nats.ts'
import { benchCatalogue } from './platform.ts'
import { percentileMs } from './realtime-histogram.ts'
import { onCleanUp } from './realtime-process.ts'
import { connect, connectedLine, disconnect, header, measuredFigures, phase, rounds, row, thousands, type Measured, type Running, type Served } from './realtime-rounds.ts'
import { median } from './stats.ts'
import type { Target } from './realtime-sockets.ts'
import { reportCase } from './report.ts'

export interface FleetOptions {
  seconds: number
  rate: number
  subscribers: number
  payloadBytes: number
  rounds: number
}

const NODES = ['A', 'B', 'C'] as const
const WARM_SECONDS = 2
/** Warm-ups at most before the case gives up on a steady state (every broadcast reaching every subscriber). */
const WARM_TRIES = 5
const FLEET = '3 nodes, NATS'
const SINGLE = '1 node'
/** What a node logs when its bus goes away or comes back (data-plane/realtime/nats-bus.ts). */
const BUS_LINES = /Realtime bus \(NATS\) is (away|back)/

async function businessProject(catalogueUrl: string, name: string): Promise<ProjectRecord> {
  const controlPlane = await ControlPlane.open(catalogueUrl)
  try {
    // The business plan: 10,000 sockets, 2,500 broadcasts and joins a second, each of a fleet's nodes a third of them.
    return await createProject(controlPlane, { name, plan: 'business' })
  } finally {
    await controlPlane.close()
  }
}

function targetOf(node: FleetNode, project: ProjectRecord): Target {
  const socket = `${node.origin.replace(/^http/, 'ws')}/project/${project.ref}/realtime/v1/websocket`
  return { side: 'baseplane', url: `${socket}?apikey=${project.anonKey}&vsn=2.0.0`, token: project.anonKey }
}

/** Warm-up phases until one reaches every subscriber; how many it took (WARM_TRIES + 1: never). */
async function warm(running: Running, rate: number): Promise<number> {
  for (let tries = 1; tries <= WARM_TRIES; tries++) {
    const measured = await phase(running, { mode: 'rate', rate, window: 0, seconds: WARM_SECONDS })
    if (measured.deliveries >= measured.expected) return tries
  }
  return WARM_TRIES + 1
}

export async function runFleet(serverUrl: string, options: FleetOptions): Promise<void> {
  const { subscribers, rate, seconds } = options
  const binary = natsServerBinary()
  if (binary === undefined) {
    console.log('fleet: skipped: nats-server is not installed (Debian: apt-get install nats-server)')
    return
  }
  const perNode = NODES.map((_, i) => Math.floor(subscribers / NODES.length) + (i < subscribers % NODES.length ? 1 : 0))
  console.log(
    `fleet: ${subscribers} subscribers on one channel split over ${NODES.length} nodes (${perNode.join(', ')}) through nats-server, 1 publisher on node A, ` +
      `${options.payloadBytes}-byte JSON payloads, ${rate} broadcasts/s; against 1 node with the same subscribers and rate; ${options.rounds} rounds`,
  )
  const stops: Array<() => Promise<void>> = []
  const sides: Running[] = []
  const nodes: FleetNode[] = []
  const tries = new Map<string, number>()
  try {
    const nats = await startNats(binary)
    stops.push(onCleanUp(() => nats.stop()))
    const catalogues = { fleet: await benchCatalogue(serverUrl), single: await benchCatalogue(serverUrl) }
    for (const catalogue of Object.values(catalogues)) stops.push(onCleanUp(() => dropCatalogue(serverUrl, catalogue)))
    const fleetProject = await businessProject(catalogues.fleet, 'realtime fleet bench')
    const singleProject = await businessProject(catalogues.single, 'realtime one-node bench')

    const started = performance.now()
    // A first, on its own: the first node of a catalogue records the fleet's settings (the bus among them), the others check theirs against it.
    const env = { BASEPLANE_NATS_URL: nats.url, BASEPLANE_HTTP_ENGINE: 'uws', ...sharedStorage(catalogues.fleet) }
    const first = await startFleetNode('A', catalogues.fleet, env)
    stops.push(onCleanUp(() => first.stop()))
    const others = await Promise.all([startFleetNode('B', catalogues.fleet, env), startFleetNode('C', catalogues.fleet, env), startFleetNode('single', catalogues.single, { BASEPLANE_HTTP_ENGINE: 'uws' })])
    for (const node of others) stops.push(onCleanUp(() => node.stop()))
    const single = others[2]
    nodes.push(first, others[0], others[1])
    console.log(`  ${nodes.length + 1} nodes started in ${((performance.now() - started) / 1000).toFixed(1)} s`)

    const fleet: Served = {
      target: targetOf(first, fleetProject),
      subscriberTargets: nodes.map((node) => targetOf(node, fleetProject)),
      pids: [...nodes.map((node) => node.pid), nats.pid],
      stop: async () => {},
    }
    const one: Served = { target: targetOf(single, singleProject), pids: [single.pid], stop: async () => {} }
    for (const [name, served] of [
      [FLEET, fleet],
      [SINGLE, one],
    ] as const) {
      const running = await connect(name, served, { subscribers, processes: NODES.length, payloadBytes: options.payloadBytes })
      stops.push(onCleanUp(() => disconnect(running)))
      sides.push(running)
      console.log(connectedLine(running, subscribers))
    }
    for (const running of sides) tries.set(running.name, await warm(running, rate))
    await rounds(sides, { mode: 'rate', rate, window: 0, seconds }, 'fixed', options.rounds)
  } finally {
    for (const stop of stops.reverse()) await stop()
  }

  for (const running of sides) {
    const took = tries.get(running.name)!
    if (took > 1) console.log(`  ${running.name}: ${took > WARM_TRIES ? `no warm-up of ${WARM_SECONDS} s reached every subscriber in ${WARM_TRIES} tries` : `steady after ${took} warm-ups`}`)
  }
  console.log(`fixed rate: ${rate} broadcasts/s for ${seconds} s a side (${thousands(rate * subscribers)} deliveries/s offered), after warm-up`)
  console.log(header(14))
  for (const { name, fixed } of sides) console.log(row(name, fixed!, rate * subscribers, 14))
  console.log("  (server µs: CPU a delivery of the side's node processes, and of nats-server for the fleet; clients µs: of the publisher's and subscribers' processes)")
  const bus = nodes.flatMap((node) => node.linesMatching(BUS_LINES).map((line) => `${node.name}: ${line}`))
  if (bus.length > 0) console.log(`  the bus went away during the run:\n    ${bus.join('\n    ')}`)

  const [ours, peer] = [sides.find((s) => s.name === FLEET)?.fixed, sides.find((s) => s.name === SINGLE)?.fixed] as [Measured | undefined, Measured | undefined]
  if (!ours || !peer) return
  const p99 = (m: Measured) => percentileMs(m.latency, 0.99)
  const p50 = (m: Measured) => percentileMs(m.latency, 0.5)
  const byNode = (m: Measured, names: readonly string[]) => m.byProcess.map((counts, i) => `${names[i]} ${percentileMs(counts, 0.5).toFixed(2)}/${percentileMs(counts, 0.99).toFixed(2)}`).join(', ')
  console.log(`  p50/p99 ms by the subscribers' node: ${FLEET}: ${byNode(ours, NODES)} (the publisher on A); ${SINGLE}: ${byNode(peer, ['1st third', '2nd', '3rd'])}`)
  const lost = ours.expected - ours.deliveries
  console.log(`fleet lost: ${thousands(Math.max(0, lost))} of ${thousands(ours.expected)} deliveries, ${ours.lost} sockets (goal 0 in steady state)`)
  // Rounds of the two sides run close together: their ratio round by round is less at the mercy of whatever else the machine does.
  const byRound = ours.roundsP99.map((ms, i) => ms / peer.roundsP99[i]!)
  console.log(
    `ratio ${FLEET} / ${SINGLE}, p99 at ${rate} broadcasts/s: ${median(byRound).toFixed(2)}x (goal <= 2), the median of the rounds' (${byRound.map((r) => r.toFixed(2)).join(', ')}; ` +
      `of the totals ${(p99(ours) / p99(peer)).toFixed(2)}x: ${p99(ours).toFixed(2)} ms against ${p99(peer).toFixed(2)}); p50 ${(p50(ours) / p50(peer)).toFixed(2)}x; ` +
      `server CPU a delivery ${(ours.serverCpu / ours.deliveries / (peer.serverCpu / peer.deliveries)).toFixed(2)}x`,
  )
  reportCase({
    suite: 'realtime', case: `fleet: ${FLEET} / ${SINGLE}, p99 at ${rate} broadcasts/s`, figures: { ...measuredFigures(ours), lostDeliveries: Math.max(0, lost) },
    peer: SINGLE, peerFigures: measuredFigures(peer), ratio: median(byRound), what: "p99 ms, the median of the rounds' ratios (lower is better)", runs: byRound, goal: { atMost: 2 },
  })
}
