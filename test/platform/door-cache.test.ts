// Bad traffic stays at the door (issue 24, item 5): refs that name no project
// and wrong keys are answered from the directory's bounded caches, so they
// cost the catalogue a read for the first of each only; creations and key
// rotations still apply at once on every node; and the throttle counts an
// attempt before it is checked, so concurrent wrong passwords on two nodes
// are refused past the limit (plus the documented overshoot per node).
import crypto from 'node:crypto'
import pg from 'pg'
import t from 'tap'
import { DIRECTORY_LIMITS, ProjectDirectory } from '../../data-plane/project-directory.ts'
import { ATTEMPT_OVERSHOOT_PER_PROCESS } from '../../data-plane/throttle.ts'
import { adminQuery } from '../helpers/db.ts'
import { request, type ErrorBody } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'
import { createProject, rotateProjectKeys } from '../../control-plane/projects.ts'

/** A ref of the catalogue's pattern that names no project (yet). */
const randomRef = () => `r${crypto.randomBytes(10).toString('hex')}`

const origin = (port: number) => `http://127.0.0.1:${port}`

/** `count` requests, at most `width` at a time. */
async function flood<V>(count: number, width: number, send: (i: number) => Promise<V>): Promise<V[]> {
  const replies: V[] = []
  for (let start = 0; start < count; start += width) {
    replies.push(...(await Promise.all(Array.from({ length: Math.min(width, count - start) }, (_, i) => send(start + i)))))
  }
  return replies
}

const tally = (statuses: number[]) => statuses.reduce<Record<number, number>>((counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {})

t.test('refs that name no project and a wrong apikey cost the catalogue a read for the first of each only', async (t) => {
  const a = await startTestPlatform(t)
  const project = await a.createProject({ name: 'Door' })
  const directory = a.platform.directory
  const health = (ref: string, apikey: string) => request<ErrorBody>(`${a.origin}/project/${ref}/health`, { headers: { apikey } })
  t.equal((await health(project.ref, project.anonKey)).status, 200, 'the project answers')

  const refs = Array.from({ length: 5 }, randomRef)
  let before = directory.catalogueReads
  const unknown = await flood(200, 20, (i) => health(refs[i % refs.length]!, project.anonKey))
  t.same(tally(unknown.map((reply) => reply.status)), { 404: 200 }, '200 requests over 5 unknown refs: all 404')
  t.equal(unknown[0]!.json.code, 'project_not_found')
  const unknownReads = directory.catalogueReads - before
  t.ok(unknownReads <= refs.length, `${unknownReads} catalogue reads for 200 requests over ${refs.length} unknown refs`)

  before = directory.catalogueReads
  const distinct = await flood(200, 200, () => health(randomRef(), project.anonKey))
  t.same(tally(distinct.map((reply) => reply.status)), { 404: 200 }, '200 distinct unknown refs at once: all 404')
  const distinctReads = directory.catalogueReads - before
  t.ok(distinctReads < 100, `${distinctReads} catalogue statements for 200 distinct unknown refs at once (misses are read in batches)`)

  before = directory.catalogueReads
  const malformed = await flood(50, 50, (i) => health(`NOT-A-REF-${i}`, project.anonKey))
  t.same(tally(malformed.map((reply) => reply.status)), { 404: 50 }, 'strings that cannot be refs: 404')
  t.equal(directory.catalogueReads - before, 0, 'and no catalogue read')

  const wrongKey = `${project.anonKey.slice(0, -4)}AAAA`
  before = directory.catalogueReads
  const sequential = await flood(100, 1, () => health(project.ref, wrongKey))
  const concurrent = await flood(100, 50, () => health(project.ref, wrongKey))
  t.same(tally([...sequential, ...concurrent].map((reply) => reply.status)), { 401: 200 }, '200 requests with a wrong apikey: all 401')
  t.equal(sequential[0]!.json.code, 'invalid_api_key')
  const wrongKeyReads = directory.catalogueReads - before
  t.ok(wrongKeyReads <= 1, `${wrongKeyReads} catalogue read for 200 requests with one wrong apikey (read again once, in case keys were just rotated)`)

  const served = await health(project.ref, project.anonKey)
  t.equal(served.status, 200, 'the right key is still served')
  t.equal(served.json.code, undefined, 'without an error')
  const cached = directory.cached
  t.ok(cached.missing <= DIRECTORY_LIMITS.missing && cached.projects <= DIRECTORY_LIMITS.projects, `the caches hold ${JSON.stringify(cached)}, within their bounds`)
})

t.test('the caches stay within their bounds, and an evicted record breaks nothing', async (t) => {
  const a = await startTestPlatform(t)
  const projects = await Promise.all([1, 2, 3, 4, 5].map((i) => a.createProject({ name: `Bounded ${i}` })))
  const pool = new pg.Pool({ connectionString: a.catalogueUrl, max: 2 })
  const limits = { projects: 3, missing: 100 }
  const directory = new ProjectDirectory(a.catalogueUrl, pool, limits)
  t.teardown(async () => {
    await directory.close()
    await pool.end()
  })
  await directory.start()

  const refs = Array.from({ length: 5000 }, randomRef)
  for (let start = 0; start < refs.length; start += 500) {
    const found = await Promise.all(refs.slice(start, start + 500).map((ref) => directory.get(ref)))
    t.ok(
      found.every((project) => project === undefined),
      `refs ${start + 1} to ${start + 500}: none found`,
    )
    t.ok(directory.cached.missing <= limits.missing, `after ${start + 500} random refs the cache of missing refs holds ${directory.cached.missing} (bound ${limits.missing})`)
  }
  t.ok(directory.catalogueReads <= 40, `5,000 random refs asked 500 at a time took ${directory.catalogueReads} statements`)

  const held = await directory.get(projects[0]!.ref)
  t.equal(held?.ref, projects[0]!.ref, 'a project is found')
  for (const project of projects.slice(1)) t.equal((await directory.get(project.ref))?.ref, project.ref, `${project.ref} is found`)
  t.ok(directory.cached.projects <= limits.projects, `the cache of records holds ${directory.cached.projects} (bound ${limits.projects})`)
  t.equal(directory.peek(projects[0]!.ref), undefined, 'the least recently used record was evicted')
  t.equal(held?.anonKey, projects[0]!.anonKey, 'the record a request holds is intact after eviction')
  const again = await directory.get(projects[0]!.ref)
  t.equal(again?.version, held?.version, 'and is read again when asked')

  // Through HTTP on the platform's own directory (default bounds).
  const health = (ref: string) => request(`${a.origin}/project/${ref}/health`, { headers: { apikey: projects[0]!.anonKey } })
  const replies = await flood(2000, 100, () => health(randomRef()))
  t.same(tally(replies.map((reply) => reply.status)), { 404: 2000 }, '2,000 random refs over HTTP: all 404')
  t.ok(a.platform.directory.cached.missing <= DIRECTORY_LIMITS.missing, `the platform's cache holds ${a.platform.directory.cached.missing} missing refs (bound ${DIRECTORY_LIMITS.missing})`)
})

t.test('a project created on node 2 answers on node 1 at once, though node 1 just missed its ref', async (t) => {
  const a = await startTestPlatform(t)
  const b = await a.startAnotherNode()
  const ref = randomRef()
  const through = { 'node 1': origin(a.platform.port), 'node 2': origin(b.port) }
  for (const [name, url] of Object.entries(through)) {
    const missed = await request<ErrorBody>(`${url}/project/${ref}/health`, { headers: { apikey: 'anything' } })
    t.same({ status: missed.status, code: missed.json.code }, { status: 404, code: 'project_not_found' }, `${name} misses the ref before it exists`)
  }
  const record = await createProject(b.controlPlane, { name: 'Just made', ref })
  for (const [name, url] of Object.entries(through)) {
    const found = await request<ErrorBody>(`${url}/project/${ref}/health`, { headers: { apikey: record.anonKey } })
    t.equal(found.status, 200, `${name} answers the new project at once`)
    t.equal(found.json.code, undefined, `${name}: no error`)
  }
})

t.test('a rotated key works at once on both nodes, and the old one is refused after one read', async (t) => {
  const a = await startTestPlatform(t)
  const b = await a.startAnotherNode()
  const project = await a.createProject({ name: 'Rotated' })
  const nodes = [
    { name: 'node 1', url: origin(a.platform.port), directory: a.platform.directory },
    { name: 'node 2', url: origin(b.port), directory: b.directory },
  ]
  const health = (url: string, apikey: string) => request<ErrorBody>(`${url}/project/${project.ref}/health`, { headers: { apikey } })
  const wrongKey = 'not-a-key-of-this-project'
  for (const node of nodes) {
    t.equal((await health(node.url, project.anonKey)).status, 200, `${node.name} serves the first key`)
    t.equal((await health(node.url, wrongKey)).status, 401, `${node.name} refuses a wrong key`)
  }

  const rotated = await rotateProjectKeys(b.controlPlane, project.ref)
  t.not(rotated.anonKey, project.anonKey, 'the keys changed')
  for (const node of nodes) {
    const served = await health(node.url, rotated.anonKey)
    t.equal(served.status, 200, `${node.name} serves the rotated key at once`)
    t.equal(served.json.code, undefined, `${node.name}: no error`)
    const before = node.directory.catalogueReads
    const refused = await flood(50, 10, () => health(node.url, project.anonKey))
    t.same(tally(refused.map((reply) => reply.status)), { 401: 50 }, `${node.name} refuses the old key`)
    t.ok(node.directory.catalogueReads - before <= 1, `${node.name}: ${node.directory.catalogueReads - before} catalogue read for 50 requests with the old key`)
    t.equal((await health(node.url, rotated.anonKey)).status, 200, `${node.name} still serves the rotated key`)
  }
})

t.test('concurrent wrong passwords on two nodes: the shared count refuses those past the limit', async (t) => {
  const LIMIT = 5
  const env = { BASEPLANE_THROTTLE_MAX_FAILURES: String(LIMIT), BASEPLANE_TRUSTED_PROXIES: '127.0.0.1' }
  const a = await startTestPlatform(t, env)
  const b = await a.startAnotherNode()
  const project = await a.createProject({ name: 'Sprayed', auth: true })
  const signIn = (url: string, address: string) =>
    request<ErrorBody>(`${url}/project/${project.ref}/auth/v1/token?grant_type=password`, {
      headers: { apikey: project.anonKey, 'x-forwarded-for': address, 'x-supabase-api-version': '2024-01-01' },
      body: { email: 'nobody@example.test', password: 'wrong password' },
    })
  const urls = [origin(a.platform.port), origin(b.port)]

  const ATTACKS = 30
  const replies = await Promise.all(Array.from({ length: ATTACKS }, (_, i) => signIn(urls[i % 2]!, '203.0.113.7')))
  const counts = tally(replies.map((reply) => reply.status))
  const checked = counts[400] ?? 0
  const refused = counts[429] ?? 0
  t.comment(`${ATTACKS} concurrent wrong passwords over 2 nodes, limit ${LIMIT}: ${JSON.stringify(counts)}`)
  t.equal(checked + refused, ATTACKS, 'each is either checked (400) or refused (429)')
  t.ok(checked >= 1, 'some are checked')
  t.ok(checked <= LIMIT + 2 * ATTEMPT_OVERSHOOT_PER_PROCESS, `at most ${LIMIT} + ${ATTEMPT_OVERSHOOT_PER_PROCESS} per node are checked (${checked})`)
  t.ok(refused > 0, 'the rest are refused')
  const refusal = replies.find((reply) => reply.status === 429)!
  t.same(refusal.json, { code: 'over_request_rate_limit', message: 'Request rate limit reached' }, 'with the rate-limit error')
  t.ok(Number(refusal.headers['retry-after']) >= 1, 'and a Retry-After')
  t.same(replies.find((reply) => reply.status === 400)?.json, { code: 'invalid_credentials', message: 'Invalid login credentials' }, 'a checked one fails as usual')
  // Attempts refused while others were in flight leave fewer than LIMIT failures at times: a few more
  // wrong ones (each counted) reach the limit, and then every node refuses the address.
  for (let i = 0; i < LIMIT && (await signIn(urls[i % 2]!, '203.0.113.7')).status !== 429; i++);
  for (const url of urls) {
    let later = await signIn(url, '203.0.113.7')
    for (let i = 0; i < 20 && later.status !== 429; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      later = await signIn(url, '203.0.113.7')
    }
    t.equal(later.status, 429, `${url}: the address is blocked afterwards`)
  }
  // The block is written with the throttle's next batch (every 200 ms).
  let rows: Array<{ blocked: boolean }> = []
  for (let i = 0; i < 30; i++) {
    rows = (
      await adminQuery<{ blocked: boolean }>(
        a.catalogueUrl,
        'select coalesce(blocked_until > now(), false) as blocked from baseplane.throttle where ref = $1 and address = $2',
        [project.ref, '203.0.113.7'],
      )
    ).rows
    if (rows[0]?.blocked === true) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.same(rows, [{ blocked: true }], 'the block is in the catalogue')

  // One node alone: the limit holds exactly.
  const alone = await Promise.all(Array.from({ length: 20 }, () => signIn(urls[0]!, '203.0.113.8')))
  const aloneCounts = tally(alone.map((reply) => reply.status))
  t.comment(`20 concurrent wrong passwords on one node: ${JSON.stringify(aloneCounts)}`)
  t.ok((aloneCounts[400] ?? 0) <= LIMIT && (aloneCounts[400] ?? 0) >= 1, `one node checks at most ${LIMIT} (${aloneCounts[400] ?? 0})`)
  t.equal((aloneCounts[400] ?? 0) + (aloneCounts[429] ?? 0), 20, 'and refuses the rest')

  // A right answer releases its attempt: it does not count toward the limit.
  const neighbour = '203.0.113.9'
  const recover = (i: number) =>
    request(`${urls[1]!}/project/${project.ref}/auth/v1/recover`, {
      headers: { apikey: project.anonKey, 'x-forwarded-for': neighbour, 'x-supabase-api-version': '2024-01-01' },
      body: { email: `someone${i}@example.test` },
    })
  const fine = await flood(LIMIT * 2, LIMIT - 1, recover)
  t.same(tally(fine.map((reply) => reply.status)), { 200: LIMIT * 2 }, `${LIMIT * 2} successful attempts, ${LIMIT - 1} at a time, are all served`)
  // The shared count the released attempts were written to goes back down (the release statement ran).
  let shared: Array<{ failures: number }> = []
  for (let i = 0; i < 40; i++) {
    shared = (await adminQuery<{ failures: number }>(a.catalogueUrl, 'select failures from baseplane.throttle where ref = $1 and address = $2', [project.ref, neighbour])).rows
    if (shared.length > 0 && shared[0]!.failures === 0) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.same(shared, [{ failures: 0 }], 'released attempts leave no failure in the catalogue')
})
