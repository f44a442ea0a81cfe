// npm run bench:dataplane
// An apikey-checked request (apikey + Bearer, as supabase-js sends them) on
// the uWebSockets.js data plane, against node:http running the very same
// DataPlane.handle in the same process, one after the other, with wrk as the
// load. Then the first-request latency of a project whose pool was evicted.
import { performance } from 'node:perf_hooks'
import { apiDatabaseOf } from '../lib/catalogue.ts'
import { ProjectPools } from '../lib/db/project-pools.ts'
import { withRequestTransaction } from '../lib/db/request-transaction.ts'
import { startNodeServer } from '../data-plane/node-server.ts'
import { benchPlatform } from './lib/platform.ts'
import { formatLoad, wrk } from './lib/wrk.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const bench = await benchPlatform()
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
  const http = await wrk(nodeUrl, { headers, seconds })
  await node.close()

  console.log(`apikey-checked GET {base_url}/health, wrk -t1 -c64 -d${seconds}s, 2 cores`)
  console.log(formatLoad('uWebSockets.js data plane', uws))
  console.log(formatLoad('node:http, same checks', http))
  console.log(`ratio uWS / node:http: ${(uws.requestsPerSecond / http.requestsPerSecond).toFixed(2)}x`)

  // First request of a project whose pool was evicted: a new pool must open a
  // connection (TCP, SCRAM authentication, startup) before the transaction.
  const database = apiDatabaseOf(project)
  const identity = { role: 'anon' as const, claims: { role: 'anon' } }
  const time = async (pools: ProjectPools) => {
    const started = performance.now()
    await withRequestTransaction(pools.get(database), identity, (client) => client.query('select 1'))
    return performance.now() - started
  }
  const warmPools = new ProjectPools({ maxConnections: 4, poolSize: 1, idleMillis: 60000, applicationName: 'bench' })
  await time(warmPools)
  const warm: number[] = []
  const cold: number[] = []
  for (let i = 0; i < 30; i++) {
    warm.push(await time(warmPools))
    const fresh = new ProjectPools({ maxConnections: 4, poolSize: 1, idleMillis: 60000, applicationName: 'bench' })
    cold.push(await time(fresh))
    await fresh.closeAll()
  }
  await warmPools.closeAll()
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!
  console.log(`request transaction, warm pool:          median ${median(warm).toFixed(2)} ms`)
  console.log(`request transaction, pool evicted (new): median ${median(cold).toFixed(2)} ms`)
} finally {
  await bench.close()
}
