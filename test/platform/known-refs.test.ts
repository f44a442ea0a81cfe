// A flood of made-up refs costs the catalogue nothing (issue 36 item 10): each
// node knows every ref that exists (loaded when its catalogue link listens,
// kept current by the change feed), so a ref outside that set is answered 404
// from memory; a project created on one node is served by the other right
// after; and while a node's feed is down, refs it does not know are read from
// the catalogue again, within a budget per interval (past it: 503 with
// Retry-After), until the link is back and the set is loaded again.
import crypto from 'node:crypto'
import pg from 'pg'
import t from 'tap'
import { createProject, deleteProject } from '../../control-plane/projects.ts'
import { ProjectDirectory } from '../../data-plane/project-directory.ts'
import { startForwarder } from '../../dev/tcp-forwarder.ts'
import { adminQuery } from '../helpers/db.ts'
import { eventually } from '../helpers/eventually.ts'
import { request, type ErrorBody } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const randomRef = () => `r${crypto.randomBytes(10).toString('hex')}`
const origin = (port: number) => `http://127.0.0.1:${port}`
const tally = (statuses: number[]) => statuses.reduce<Record<number, number>>((counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {})

/** `count` requests, at most `width` at a time. */
async function flood<V>(count: number, width: number, send: (i: number) => Promise<V>): Promise<V[]> {
  const replies: V[] = []
  for (let start = 0; start < count; start += width) {
    replies.push(...(await Promise.all(Array.from({ length: Math.min(width, count - start) }, (_, i) => send(start + i)))))
  }
  return replies
}

const platform = await startTestPlatform(t)
const second = await platform.startAnotherNode()
const nodes = [
  { name: 'node 1', url: origin(platform.platform.port), directory: platform.platform.directory, controlPlane: platform.platform.controlPlane },
  { name: 'node 2', url: origin(second.port), directory: second.directory, controlPlane: second.controlPlane },
]

/**
 * What the catalogue database did, every client's work counted as PostgreSQL
 * counts it: committed transactions, and scans of baseplane.projects (every
 * read of a project record is one). A backend reports its counts once it is
 * idle, at most a second apart (PGSTAT_MIN_INTERVAL), hence the pause.
 */
async function catalogueCounts(): Promise<{ transactions: number; projectScans: number }> {
  await new Promise((resolve) => setTimeout(resolve, 1100))
  const { rows } = await adminQuery<{ transactions: string; scans: string }>(
    platform.catalogueUrl,
    `select (select xact_commit from pg_stat_database where datname = current_database()) as transactions,
            (select coalesce(seq_scan, 0) + coalesce(idx_scan, 0) from pg_stat_user_tables where schemaname = 'baseplane' and relname = 'projects') as scans`,
  )
  return { transactions: Number(rows[0]!.transactions), projectScans: Number(rows[0]!.scans) }
}

const less = (after: { transactions: number; projectScans: number }, before: { transactions: number; projectScans: number }) => ({
  transactions: after.transactions - before.transactions,
  projectScans: after.projectScans - before.projectScans,
})

t.test('2,000 requests for random refs on two nodes: all 404, no catalogue read, no more catalogue work than an idle fleet does', async (t) => {
  const project = await platform.createProject({ name: 'Known' })
  for (const node of nodes) {
    t.ok(node.directory.knowsEveryRef, `${node.name} knows every ref`)
    t.equal((await request(`${node.url}/project/${project.ref}/health`, { headers: { apikey: project.anonKey } })).status, 200, `${node.name} serves the project`)
  }
  const reads = nodes.map((node) => node.directory.catalogueReads)
  const before = await catalogueCounts()
  const started = Date.now()
  const replies = await flood(2000, 100, (i) => request<ErrorBody>(`${nodes[i % 2]!.url}/project/${randomRef()}/rest/v1/notes`, { headers: { apikey: project.anonKey } }))
  const floodMs = Date.now() - started
  const spent = less(await catalogueCounts(), before)
  t.same(tally(replies.map((reply) => reply.status)), { 404: 2000 }, 'every one answers 404')
  t.match(replies[0]!.json, { code: 'project_not_found', details: null, hint: null, message: /^Project "r[0-9a-f]{20}" not found$/ }, "as before, in the service's shape")
  nodes.forEach((node, i) => t.equal(node.directory.catalogueReads - reads[i]!, 0, `${node.name}: no read of the catalogue for them`))

  // What the fleet does anyway over as long (each node's heartbeat every 2 s, push lease scans, the fleet's size,
  // activity and usage flushes): a window of the flood's length, measured, not waited for an event.
  const idleFrom = await catalogueCounts()
  await new Promise((resolve) => setTimeout(resolve, floodMs))
  const idle = less(await catalogueCounts(), idleFrom)
  t.comment(`2,000 random refs in ${floodMs} ms: ${JSON.stringify(spent)} in the catalogue; idle over as long: ${JSON.stringify(idle)}`)
  // Before the known refs, the same flood here cost 41 scans of baseplane.projects (one per batched read) where
  // the idle fleet made 1, and 30 to 50 transactions more than it. The transactions' bound leaves room for the
  // background's own swing between two windows; the scans are what the directory's reads would add.
  t.ok(spent.projectScans - idle.projectScans <= 3, `${spent.projectScans} scans of baseplane.projects, ${idle.projectScans} when idle: at most 3 more`)
  t.ok(spent.transactions - idle.transactions <= 25, `${spent.transactions} catalogue transactions, ${idle.transactions} when idle: at most 25 more`)
})

t.test('a project created on node 1 is served by node 2 right after, and one deleted is gone there too', async (t) => {
  for (const [maker, other] of [[nodes[0]!, nodes[1]!], [nodes[1]!, nodes[0]!]] as const) {
    const ref = randomRef()
    const missed = await request<ErrorBody>(`${other.url}/project/${ref}/health`, { headers: { apikey: 'anything' } })
    t.same({ status: missed.status, code: missed.json.code }, { status: 404, code: 'project_not_found' }, `${other.name} answers 404 before it exists`)
    const record = await createProject(maker.controlPlane, { name: 'Just made', ref })
    const found = await request<ErrorBody>(`${other.url}/project/${ref}/health`, { headers: { apikey: record.anonKey } })
    t.same({ status: found.status, code: found.json.code }, { status: 200, code: undefined }, `made on ${maker.name}, ${other.name} serves it right after`)
    await deleteProject(maker.controlPlane, ref)
    const gone = await request<ErrorBody>(`${other.url}/project/${ref}/health`, { headers: { apikey: record.anonKey } })
    t.same({ status: gone.status, code: gone.json.code }, { status: 404, code: 'project_not_found' }, `deleted on ${maker.name}, ${other.name} answers 404`)
    const reads = other.directory.catalogueReads
    const again = await request<ErrorBody>(`${other.url}/project/${ref}/health`, { headers: { apikey: record.anonKey } })
    t.same({ status: again.status, reads: other.directory.catalogueReads - reads }, { status: 404, reads: 0 }, 'and again without a read')
  }
})

t.test('while the feed is down, unknown refs are read within the budget, and the set is loaded again when it is back', async (t) => {
  const link = await startForwarder(Number(new URL(platform.catalogueUrl).port || 5432))
  t.teardown(() => link.close())
  const pool = new pg.Pool({ connectionString: platform.catalogueUrl, max: 2 })
  const directory = new ProjectDirectory(link.via(platform.catalogueUrl), pool, { unknownReads: 2, unknownReadsIntervalMs: 60_000 })
  t.teardown(async () => {
    await directory.close()
    await pool.end()
  })
  const known = await platform.createProject({ name: 'Known before the outage' })
  await directory.start()
  t.ok(directory.knowsEveryRef, 'the set is loaded once the link listens')
  let reads = directory.catalogueReads
  const strangers = await Promise.all(Array.from({ length: 50 }, () => directory.get(randomRef())))
  t.same({ found: strangers.filter(Boolean).length, reads: directory.catalogueReads - reads }, { found: 0, reads: 0 }, '50 random refs: none found, no read')

  await link.down()
  await eventually('the directory notices the link is down', 10_000, async () => !directory.knowsEveryRef)
  // Not live any more (a node cut off for 10 s is not): the creation below does not wait for it.
  await adminQuery(platform.catalogueUrl, 'delete from baseplane.nodes where id = $1', [directory.nodeId])
  const madeMeanwhile = await platform.createProject({ name: 'Made while the feed was down' })

  reads = directory.catalogueReads
  t.equal((await directory.get(known.ref))?.ref, known.ref, 'a known ref is read as usual')
  t.equal((await directory.get(madeMeanwhile.ref))?.ref, madeMeanwhile.ref, 'a ref it does not know is read: a project made meanwhile is found')
  const burst = await Promise.all(Array.from({ length: 100 }, () => directory.get(randomRef())))
  t.same(burst, Array.from({ length: 100 }, () => undefined), '100 random refs at once share one statement')
  t.equal(directory.catalogueReads - reads, 3, 'three statements so far, two of them spending the budget')
  const refused = await directory.get(randomRef()).then(
    () => undefined,
    (error: { code?: string; status?: number; retryAfter?: number }) => ({ code: error.code, status: error.status, retryAfter: error.retryAfter }),
  )
  t.same(refused, { code: 'catalogue_unavailable', status: 503, retryAfter: 2 }, 'past the budget: 503 with Retry-After, not a read, not a 404')
  t.equal(directory.catalogueReads - reads, 3, 'no statement for it')

  await link.up()
  await eventually('the set is loaded again', 10_000, async () => directory.knowsEveryRef)
  reads = directory.catalogueReads
  const afterwards = await Promise.all(Array.from({ length: 50 }, () => directory.get(randomRef())))
  t.same({ found: afterwards.filter(Boolean).length, reads: directory.catalogueReads - reads }, { found: 0, reads: 0 }, 'random refs cost nothing again')
  // Its cache was dropped when the link came back, and the set answers: so the reload holds the project made meanwhile.
  t.equal((await directory.get(madeMeanwhile.ref))?.ref, madeMeanwhile.ref, 'the project made while the feed was down is known from the reload')
  const madeNow = await platform.createProject({ name: 'Made with the feed up' })
  t.equal((await directory.get(madeNow.ref))?.ref, madeNow.ref, 'and one made now is known from the feed')
})
