// The catalogue, and the projects of its default server, on a Patroni-managed
// PostgreSQL 15 pair behind HAProxy (issue 43: the run it was filed from), two
// real node processes under REST load, the leader's host killed: every answer
// meanwhile is 200/201 or 503 with Retry-After, both nodes answer again without
// a restart, nothing acknowledged is lost, the nodes' catalogue link heals
// (/health says the catalogue is up), and a project created after the switch
// is served by both nodes.
import t from 'tap'
import { ControlPlane } from '../../control-plane/control-plane.ts'
import { createProject } from '../../control-plane/projects.ts'
import { ownerUrlOf, type ProjectRecord } from '../../lib/catalogue.ts'
import { createDatabase } from '../../dev/db.ts'
import { startPlatformProcess, type PlatformProcess } from '../helpers/platform-process.ts'
import { HA_SETTINGS, patroniMissing, startPatroni } from '../helpers/patroni.ts'
import { acknowledgedPresent, across, addNotes, call, report } from '../helpers/failover-load.ts'

const missing = patroniMissing()
if (missing !== undefined) {
  t.plan(0, `${missing}; .ci/run installs them`)
  process.exit(0)
}
// A pair to bootstrap and clone, two node processes and a leader TTL or two: about 75 s alone, more on a loaded machine than tap's 180 s.
t.setTimeout(400_000)

const SWITCH_LIMIT_MS = (HA_SETTINGS.ttl + 30) * 1000
/** The nodes reconnect to the catalogue every 0.5 s and hear its changes at once; this leaves a loaded machine room. */
const HEAL_MS = 20_000

// Everything made here goes with the pair when the test ends (its folder is removed).
const ha = await startPatroni(t)
const catalogueUrl = await createDatabase(ha.url, 'bpcat')
const controlPlane = await ControlPlane.open(catalogueUrl)
const record: ProjectRecord = await createProject(controlPlane, { name: 'Catalogue on Patroni' })
await controlPlane.close()
await addNotes(ownerUrlOf(record))
const nodes: PlatformProcess[] = [await startPlatformProcess(t, catalogueUrl), await startPlatformProcess(t, catalogueUrl)]
const bases = nodes.map((node) => node.baseUrlOf(record.ref))

async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  const deadline = performance.now() + HEAL_MS
  while (performance.now() < deadline) {
    if (await check().catch(() => false)) return true
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return false
}

t.test("the catalogue's leader killed under load", async (t) => {
  const { answers, at, firstGood } = await across(t, { ha, bases, anonKey: record.anonKey, switchLimitMs: SWITCH_LIMIT_MS }, async () => {
    const killed = await ha.killLeader()
    return { at: killed.at, from: killed.name }
  })
  report(t, 'kill', answers, at, nodes.length)
  t.comment(`each node's first good answer polled on the side: ${firstGood.map((ms) => `${((ms - at) / 1000).toFixed(2)} s`).join(', ')} after the kill`)
  await acknowledgedPresent(t, answers, ownerUrlOf(record))

  for (const node of nodes) {
    const healed = await eventually(async () => {
      const health = await call(`${node.origin}/health`)
      return health.status === 200 && (JSON.parse(health.text) as { catalogue?: string }).catalogue !== 'down'
    })
    t.ok(healed, `${node.origin}/health: the catalogue is up again`)
  }
  const after = await ControlPlane.open(catalogueUrl)
  const created = await createProject(after, { name: 'Made after the switch' }).finally(() => after.close())
  for (const node of nodes) {
    const base = node.baseUrlOf(created.ref)
    let last = ''
    const served = await eventually(async () => {
      const answer = await call(`${base}/rest/v1/`, { headers: { apikey: created.anonKey } })
      last = `${answer.status} ${answer.text.slice(0, 200)}`
      return answer.status === 200
    })
    t.ok(served, `a project created after the switch is served by ${node.origin} (${last})`)
  }
})
