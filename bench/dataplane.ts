// npm run bench:dataplane
// An apikey-checked request (apikey + Bearer, as supabase-js sends them) on
// the uWebSockets.js data plane, against node:http running the very same
// DataPlane.handle in the same process, and against each server answering a
// constant, with wrk as the load; then the first-request latency of a project
// whose pool was evicted. Run once per Node (22 from the checkout, the
// machine's own, BENCH_NODES=path,path to choose), each in a process of its
// own, one after the other, so the Node versions compare in the same run.
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import uWS from '@based/uws'
import { loadHttpEngine } from '../data-plane/http-engine.ts'
import { benchPlatform } from './lib/platform.ts'
import { formatLoad, wrk, type LoadResult } from './lib/wrk.ts'
import { median } from './lib/stats.ts'
import { reportCase, reportRates, type Goal } from './lib/report.ts'
import { measureHop, type HopFigures } from './lib/thread-hop.ts'
import { createProject } from '../control-plane/projects.ts'

const ROOT = path.resolve(import.meta.dirname, '..')

async function trivialServers() {
  const body = '{"status":"ok"}'
  const app = uWS.App().any('/*', (res) => {
    res.cork(() => res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(body))
  })
  const socket = await new Promise<uWS.us_listen_socket>((resolve) => app.listen('127.0.0.1', 0, (s) => resolve(s)))
  // The same constant, after reading the request as uws-server.ts must (abort handler, every header, method,
  // path, query): what uWS.js's own crossings cost before the data plane does anything.
  const reading = uWS.App().any('/*', (res, req) => {
    res.onAborted(() => {})
    const headers: Record<string, string> = {}
    req.forEach((name, value) => (headers[name] = value))
    req.getCaseSensitiveMethod()
    req.getUrl()
    req.getQuery()
    res.cork(() => res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(body))
  })
  const readingSocket = await new Promise<uWS.us_listen_socket>((resolve) => reading.listen('127.0.0.1', 0, (s) => resolve(s)))
  const server = http.createServer((_, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    uwsUrl: `http://127.0.0.1:${uWS.us_socket_local_port(socket)}/`,
    uwsReadingUrl: `http://127.0.0.1:${uWS.us_socket_local_port(readingSocket)}/`,
    nodeUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: async () => {
      uWS.us_listen_socket_close(socket)
      uWS.us_listen_socket_close(readingSocket)
      server.closeAllConnections()
      server.close()
    },
  }
}

/** What one Node's run reports to the driver. */
interface NodeRun {
  node: string
  checked: LoadResult
  nodeHttp: LoadResult
  uwsConstant: LoadResult
  uwsReading: LoadResult
  nodeConstant: LoadResult
  hop: HopFigures
  warmMs: number
  evictedMs: number
}

async function measure(seconds: number): Promise<NodeRun> {
  // One pool of one connection per worker thread, so a second project evicts the first.
  const bench = await benchPlatform({ BASEPLANE_MAX_PROJECT_CONNECTIONS: '3', BASEPLANE_PROJECT_POOL_SIZE: '1' })
  try {
    const project = await createProject(bench.platform.controlPlane, { name: 'bench' })
    const headers = { apikey: project.anonKey, authorization: `Bearer ${project.anonKey}` }
    const node = await (await loadHttpEngine('node')).start(bench.platform.dataPlane, '127.0.0.1', 0)
    const uwsUrl = `${bench.origin}/project/${project.ref}/health`
    const nodeUrl = `http://127.0.0.1:${node.port}/project/${project.ref}/health`
    // Warm both (caches, JIT) before measuring.
    await wrk(uwsUrl, { headers, seconds: 2 })
    await wrk(nodeUrl, { headers, seconds: 2 })
    const uws = await wrk(uwsUrl, { headers, seconds })
    const nodeHttp = await wrk(nodeUrl, { headers, seconds })
    await node.close()
    // The ceiling on this machine right now: each server answering a constant, no checks.
    const trivial = await trivialServers()
    // The constants get the checked path's headers too: parsing them is part of every request.
    const uwsTrivial = await wrk(trivial.uwsUrl, { headers, seconds })
    const uwsReading = await wrk(trivial.uwsReadingUrl, { headers, seconds })
    const httpTrivial = await wrk(trivial.nodeUrl, { headers, seconds })
    await trivial.close()
    // The hop to a concern's thread, against the cheapest statement it carries.
    const hop = await measureHop(bench.catalogueUrl, Math.max(1, Math.min(seconds, 3)))

    // First request of a project whose pool was evicted: this platform may hold
    // one project pool per worker thread, so alternating two projects evicts
    // every time, and the request must open a connection (TCP, SCRAM, startup).
    const other = await createProject(bench.platform.controlPlane, { name: 'bench other' })
    const graphql = async (ref: string, apikey: string) => {
      const started = performance.now()
      const reply = await fetch(`${bench.origin}/project/${ref}/graphql/v1`, {
        method: 'POST',
        headers: { apikey, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }' }),
      })
      await reply.text()
      if (reply.status !== 200) throw new Error(`graphql answered ${reply.status}`)
      return performance.now() - started
    }
    await graphql(project.ref, project.anonKey)
    await graphql(other.ref, other.anonKey)
    const warm: number[] = []
    const evicted: number[] = []
    for (let i = 0; i < 20; i++) warm.push(await graphql(project.ref, project.anonKey))
    for (let i = 0; i < 20; i++) {
      evicted.push(await graphql(i % 2 ? project.ref : other.ref, i % 2 ? project.anonKey : other.anonKey))
    }
    return { node: process.versions.node, checked: uws, nodeHttp, uwsConstant: uwsTrivial, uwsReading, nodeConstant: httpTrivial, hop, warmMs: median(warm), evictedMs: median(evicted) }
  } finally {
    await bench.close()
}
}

/** The Nodes to compare: BENCH_NODES, else Node 22 from the checkout and the machine's own Node (when it differs). */
function nodesToRun(): string[] {
  if (process.env.BENCH_NODES) return process.env.BENCH_NODES.split(',').map((entry) => entry.trim()).filter(Boolean)
  const nodes = [path.join(execFileSync('bash', [path.join(ROOT, '.ci/node'), '22'], { encoding: 'utf8' }).trim(), 'node')]
  const local = ROOT + path.sep
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'node')
    if (dir.startsWith(local) || !fs.existsSync(candidate)) continue
    if (fs.realpathSync(candidate) !== fs.realpathSync(nodes[0]!)) nodes.push(candidate)
    break
  }
  return nodes
}

function runOn(node: string, seconds: number): Promise<NodeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, ['--import', 'tsx', '--import', path.join(ROOT, 'bench/lib/from-build.mjs'), import.meta.filename], { env: { ...process.env, BENCH_DATAPLANE_CHILD: String(seconds) }, stdio: ['ignore', 'pipe', 'inherit'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk))
    child.on('exit', (code) => {
      const line = output.split('\n').find((entry) => entry.startsWith('{'))
      if (code !== 0 || line === undefined) reject(new Error(`${node} exited with ${code}:\n${output}`))
      else resolve(JSON.parse(line) as NodeRun)
    })
  })
}

const ratio = (a: LoadResult, b: LoadResult) => `${(a.requestsPerSecond / b.requestsPerSecond).toFixed(2)}x`
const major = (node: string) => node.split('.')[0]!
/** A run's name in the report's cases: "Node 22", or the full version and place when two runs share a major (npm's PATH can put the same Node twice). */
const nodeLabel = (runs: NodeRun[], i: number) =>
  runs.filter((r) => major(r.node) === major(runs[i]!.node)).length > 1 ? `Node ${runs[i]!.node} (run ${i + 1})` : `Node ${major(runs[i]!.node)}`

/** Records one printed req/s ratio in the run's report (bench/lib/report.ts). */
const report = (name: string, ours: LoadResult, peer: string, theirs: LoadResult, goal?: Goal) => reportRates('dataplane', name, ours, peer, theirs, goal)

if (process.env.BENCH_DATAPLANE_CHILD) {
  console.log(JSON.stringify(await measure(Number(process.env.BENCH_DATAPLANE_CHILD))))
} else {
  const seconds = Number(process.env.BENCH_SECONDS ?? 10)
  const runs: NodeRun[] = []
  for (const node of nodesToRun()) runs.push(await runOn(node, seconds))
  console.log(`apikey-checked GET {base_url}/health, wrk -t1 -c64 -d${seconds}s, 2 cores; each Node in its own process, one after the other`)
  for (const [i, run] of runs.entries()) {
    console.log(`\nNode ${run.node}`)
    console.log(formatLoad('uWebSockets.js data plane', run.checked))
    console.log(formatLoad('node:http, same checks', run.nodeHttp))
    console.log(formatLoad('reference: uWS, constant answer', run.uwsConstant))
    console.log(formatLoad('reference: uWS reads it, constant', run.uwsReading))
    console.log(formatLoad('reference: node:http, constant', run.nodeConstant))
    console.log(`ratio uWS / node:http: ${ratio(run.checked, run.nodeHttp)}`)
    console.log(`ratio checked / uWS constant: ${ratio(run.checked, run.uwsConstant)}`)
    console.log(`ratio checked / uWS reading the request, constant: ${ratio(run.checked, run.uwsReading)} (goal >= 0.85x, issue 41); uWS reading / constant: ${ratio(run.uwsReading, run.uwsConstant)}`)
    console.log(`reference ratio: ${ratio(run.uwsConstant, run.nodeConstant)}`)
    const node = nodeLabel(runs, i)
    report(`uWS / node:http, checked, ${node}`, run.checked, 'node:http, same checks', run.nodeHttp)
    report(`checked / uWS constant answer, ${node}`, run.checked, 'uWS, constant answer', run.uwsConstant)
    report(`checked / uWS reading the request then answering a constant, ${node}`, run.checked, 'uWS reading the request, constant answer', run.uwsReading, { atLeast: 0.85 })
    report(`uWS reading the request / uWS constant, ${node}`, run.uwsReading, 'uWS, constant answer', run.uwsConstant)
    report(`uWS constant / node:http constant, ${node}`, run.uwsConstant, 'node:http, constant answer', run.nodeConstant)
    const { hop } = run
    console.log(`hop to a concern's thread (an empty task, Piscina as the dispatcher makes it): ${hop.taskMicros.toFixed(0)} µs a round trip, ${Math.round(hop.tasksPerSecond)}/s 8 at once`)
    console.log(`the cheapest statement (select 1, pg): ${hop.statementMicros.toFixed(0)} µs a round trip, ${Math.round(hop.statementsPerSecond)}/s 8 at once`)
    console.log(`ratio hop / statement, round trip: ${(hop.taskMicros / hop.statementMicros).toFixed(2)}x (goal < 1: the hop costs less than the statement it carries)`)
    reportCase({
      suite: 'dataplane',
      case: `hop to a thread / select 1, round trip, ${node}`,
      figures: { microseconds: hop.taskMicros, perSecond: hop.tasksPerSecond },
      peer: 'select 1 on one pg connection',
      peerFigures: { microseconds: hop.statementMicros, perSecond: hop.statementsPerSecond },
      ratio: hop.taskMicros / hop.statementMicros,
      what: 'µs a round trip',
      goal: { atMost: 1 },
    })
    console.log(`POST /graphql/v1 {__typename}, pool warm:    median ${run.warmMs.toFixed(2)} ms`)
    console.log(`POST /graphql/v1 {__typename}, pool evicted: median ${run.evictedMs.toFixed(2)} ms`)
  }
  const [first, ...others] = runs
  for (const [i, other] of others.entries()) {
    console.log(`\nratio Node ${first!.node} / Node ${other.node}, checked path: ${ratio(first!.checked, other.checked)} (goal >= 1x); node:http: ${ratio(first!.nodeHttp, other.nodeHttp)}`)
    const pair = `${nodeLabel(runs, 0)} / ${nodeLabel(runs, i + 1)}`
    report(`${pair}, checked path`, first!.checked, `Node ${other.node}`, other.checked, { atLeast: 1 })
    report(`${pair}, node:http`, first!.nodeHttp, `Node ${other.node}`, other.nodeHttp)
  }
}
