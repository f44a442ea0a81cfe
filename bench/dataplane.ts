// npm run bench:dataplane
// An apikey-checked request (apikey + Bearer, as supabase-js sends them) on
// the uWebSockets.js data plane, against node:http running the very same
// DataPlane.handle in the same process, one after the other, with wrk as the
// load. Then the first-request latency of a project whose pool was evicted.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import uWS from '@trufflesuite/uws-js-unofficial'
import { startNodeServer } from '../data-plane/node-server.ts'
import { benchPlatform } from './lib/platform.ts'
import { formatLoad, wrk } from './lib/wrk.ts'
import { median } from './lib/stats.ts'

async function trivialServers() {
  const body = '{"status":"ok"}'
  const app = uWS.App().any('/*', (res) => {
    res.cork(() => res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(body))
  })
  const socket = await new Promise<uWS.us_listen_socket>((resolve) => app.listen('127.0.0.1', 0, (s) => resolve(s)))
  const server = http.createServer((_, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    uwsUrl: `http://127.0.0.1:${uWS.us_socket_local_port(socket)}/`,
    nodeUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: async () => {
      uWS.us_listen_socket_close(socket)
      server.closeAllConnections()
      server.close()
    },
  }
}

const seconds = Number(process.env.BENCH_SECONDS ?? 10)
// One pool of one connection per worker thread, so a second project evicts the first.
const bench = await benchPlatform({ BASEPLANE_MAX_PROJECT_CONNECTIONS: '3', BASEPLANE_PROJECT_POOL_SIZE: '1' })
try {
  const project = await bench.platform.controlPlane.create({ name: 'bench' })
  const headers = { apikey: project.anonKey, authorization: `Bearer ${project.anonKey}` }
  const node = await startNodeServer(bench.platform.dataPlane, '127.0.0.1', 0)
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
  const uwsTrivial = await wrk(trivial.uwsUrl, { seconds })
  const httpTrivial = await wrk(trivial.nodeUrl, { seconds })
  await trivial.close()

  console.log(`apikey-checked GET {base_url}/health, wrk -t1 -c64 -d${seconds}s, 2 cores`)
  console.log(formatLoad('uWebSockets.js data plane', uws))
  console.log(formatLoad('node:http, same checks', nodeHttp))
  console.log(`ratio uWS / node:http: ${(uws.requestsPerSecond / nodeHttp.requestsPerSecond).toFixed(2)}x`)
  console.log(formatLoad('reference: uWS, constant answer', uwsTrivial))
  console.log(formatLoad('reference: node:http, constant', httpTrivial))
  console.log(`reference ratio: ${(uwsTrivial.requestsPerSecond / httpTrivial.requestsPerSecond).toFixed(2)}x`)

  // First request of a project whose pool was evicted: this platform may hold
  // one project pool per worker thread, so alternating two projects evicts
  // every time, and the request must open a connection (TCP, SCRAM, startup).
  const other = await bench.platform.controlPlane.create({ name: 'bench other' })
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
  console.log(`POST /graphql/v1 {__typename}, pool warm:    median ${median(warm).toFixed(2)} ms`)
  console.log(`POST /graphql/v1 {__typename}, pool evicted: median ${median(evicted).toFixed(2)} ms`)
} finally {
  await bench.close()
}
