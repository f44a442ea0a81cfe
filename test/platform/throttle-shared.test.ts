// The per-address throttle across data-plane processes: failures counted by
// any process of a catalogue add up (baseplane.throttle), a block set by one
// is enforced by all, and a catalogue that fails leaves each process counting
// on its own until it answers again.
import t from 'tap'
import { adminQuery } from '../helpers/db.ts'
import { request, type ErrorBody } from '../helpers/http.ts'
import { startPlatformProcess } from '../helpers/platform-process.ts'
import { startTestPlatform } from '../helpers/platform.ts'
import { eventually } from '../helpers/eventually.ts'

const BLOCK_SECONDS = 8
const env = {
  BASEPLANE_THROTTLE_MAX_FAILURES: '6',
  BASEPLANE_THROTTLE_BLOCK_SECONDS: String(BLOCK_SECONDS),
  BASEPLANE_TRUSTED_PROXIES: '127.0.0.1',
}
/**
 * How long a block set by one process may take to reach the other. Each
 * process writes and polls every 200 ms; 5 s is 25 ticks, room enough for a
 * loaded 2-core machine, and shorter than the block, so a late look still
 * sees it in force.
 */
const SPREAD_MS = 5000

const ATTACKER = '203.0.113.7'
const NEIGHBOUR = '203.0.113.8'

const headers = (apikey: string, address: string) => ({ apikey, 'x-forwarded-for': `10.9.9.9, ${address}`, 'x-supabase-api-version': '2024-01-01' })

/** A failed password sign-in (a throttled failure) from `address`. */
async function failSignIn(baseUrl: string, anonKey: string, address: string) {
  const reply = await request<ErrorBody>(`${baseUrl}/auth/v1/token?grant_type=password`, {
    headers: headers(anonKey, address),
    body: { email: 'nobody@example.test', password: 'wrong password' },
  })
  return { status: reply.status, body: reply.json }
}

/** A request that is no failure itself: it only shows whether `address` is refused. */
async function health(baseUrl: string, anonKey: string, address: string) {
  const reply = await request<ErrorBody>(`${baseUrl}/auth/v1/health`, { headers: headers(anonKey, address) })
  return { status: reply.status, body: reply.json, retryAfter: reply.headers['retry-after'] }
}

const refusedBody = { code: 'over_request_rate_limit', message: 'Request rate limit reached' }
const failedSignIn = { status: 400, body: { code: 'invalid_credentials', message: 'Invalid login credentials' } }

async function sharedRow(catalogueUrl: string, ref: string, address: string) {
  const { rows } = await adminQuery<{ failures: number; blocked: boolean }>(
    catalogueUrl,
    'select failures, coalesce(blocked_until > now(), false) as blocked from baseplane.throttle where ref = $1 and address = $2',
    [ref, address],
  )
  return rows[0]
}

t.test('failures through two processes add up, and both refuse the address until the block ends', async (t) => {
  const a = await startTestPlatform(t, env)
  const project = await a.createProject({ name: 'Attacked', auth: true })
  const other = await a.createProject({ name: 'Other', auth: true })
  const b = await startPlatformProcess(t, a.catalogueUrl, env)
  const through = { A: project.baseUrl, B: b.baseUrlOf(project.ref) }

  for (let i = 0; i < 3; i++) t.same(await failSignIn(through.A, project.anonKey, ATTACKER), failedSignIn, `failure ${i + 1} through A`)
  await eventually('A writes its 3 failures', SPREAD_MS, async () => ((await sharedRow(a.catalogueUrl, project.ref, ATTACKER))?.failures === 3 ? true : undefined))
  for (let i = 3; i < 5; i++) t.same(await failSignIn(through.B, project.anonKey, ATTACKER), failedSignIn, `failure ${i + 1} through B`)
  t.same(
    await eventually('B writes its 2 failures', SPREAD_MS, () => sharedRow(a.catalogueUrl, project.ref, ATTACKER).then((row) => (row?.failures === 5 ? row : undefined))),
    { failures: 5, blocked: false },
    'the catalogue holds both processes\' failures',
  )
  for (const [name, url] of Object.entries(through)) t.equal((await health(url, project.anonKey, ATTACKER)).status, 200, `5 failures: ${name} still serves the address`)

  const sixthSent = Date.now()
  t.same(await failSignIn(through.B, project.anonKey, ATTACKER), failedSignIn, 'the sixth failure, through B')
  for (const [name, url] of Object.entries(through)) {
    const refused = await eventually(`${name} refuses the address`, SPREAD_MS, async () => {
      const reply = await health(url, project.anonKey, ATTACKER)
      return reply.status === 429 ? reply : undefined
    })
    t.same(refused.body, refusedBody, `${name} refuses with the rate-limit error`)
    const retryAfter = Number(refused.retryAfter)
    t.ok(retryAfter >= 1 && retryAfter <= BLOCK_SECONDS, `${name}: Retry-After ${refused.retryAfter} is within the block`)
  }
  t.same(await sharedRow(a.catalogueUrl, project.ref, ATTACKER), { failures: 0, blocked: true }, 'the block is in the catalogue and the count starts again')
  for (const [name, url] of Object.entries(through)) {
    t.match(await health(url, project.anonKey, NEIGHBOUR), { status: 200, body: { name: 'GoTrue' }, retryAfter: undefined }, `${name} serves another address`)
  }
  for (const [name, url] of Object.entries({ A: other.baseUrl, B: b.baseUrlOf(other.ref) })) {
    t.equal((await health(url, other.anonKey, ATTACKER)).status, 200, `${name}: another project serves the address`)
  }

  for (const [name, url] of Object.entries(through)) {
    await eventually(`${name} serves the address again`, BLOCK_SECONDS * 1000 + SPREAD_MS, async () => ((await health(url, project.anonKey, ATTACKER)).status === 200 ? true : undefined))
    // A lower bound only: load can delay the answer, never hasten it. The block began after the
    // sixth failure was sent; 1 s of slack covers the catalogue's clock against this process's.
    t.ok(Date.now() - sixthSent >= (BLOCK_SECONDS - 1) * 1000, `${name} lifted the block only after ${BLOCK_SECONDS} s (${Date.now() - sixthSent} ms)`)
  }
  // Had the block not reset the shared count (6), this failure would make 7 and block again.
  t.same(await failSignIn(through.A, project.anonKey, ATTACKER), failedSignIn, 'a failure after the block')
  await eventually('A writes the failure', SPREAD_MS, async () => ((await sharedRow(a.catalogueUrl, project.ref, ATTACKER))?.failures === 1 ? true : undefined))
  for (const [name, url] of Object.entries(through)) t.equal((await health(url, project.anonKey, ATTACKER)).status, 200, `${name}: the count started again from zero`)
})

/** Collects this process's JSON log lines (and keeps them off the test output) until the test ends. */
function captureLog(t: { teardown(fn: () => unknown): void }): Array<Record<string, unknown>> {
  const lines: Array<Record<string, unknown>> = []
  const write = process.stderr.write.bind(process.stderr)
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')
    const other: string[] = []
    for (const line of text.split('\n').filter(Boolean)) {
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>)
      } catch {
        other.push(line)
      }
    }
    return other.length === 0 ? true : write(other.join('\n') + '\n', ...rest)
  }) as typeof process.stderr.write
  t.teardown(() => {
    process.stderr.write = write
  })
  return lines
}

t.test('while the catalogue fails, each process counts on its own, and writes what it counted once it answers', async (t) => {
  const logged = captureLog(t)
  const a = await startTestPlatform(t, { ...env, BASEPLANE_LOG_LEVEL: 'info' })
  const project = await a.createProject({ name: 'Attacked', auth: true })
  const b = await startPlatformProcess(t, a.catalogueUrl, env)
  await adminQuery(a.catalogueUrl, 'alter table baseplane.throttle rename to throttle_gone')
  for (let i = 0; i < 6; i++) t.same(await failSignIn(project.baseUrl, project.anonKey, ATTACKER), failedSignIn, `failure ${i + 1} through A is answered`)
  const refused = await health(project.baseUrl, project.anonKey, ATTACKER)
  t.same({ status: refused.status, body: refused.body }, { status: 429, body: refusedBody }, 'A blocks at the sixth failure on its own count')
  t.equal((await health(b.baseUrlOf(project.ref), project.anonKey, ATTACKER)).status, 200, 'B cannot know yet')
  const failed = await eventually('A logs why it cannot sync', SPREAD_MS, async () =>
    logged.find((line) => line.message === 'the throttle could not sync with the catalogue; counting in this process and retrying'),
  )
  t.match(failed, { level: 'error', error: 'relation "baseplane.throttle" does not exist' }, 'the log says what failed')

  await adminQuery(a.catalogueUrl, 'alter table baseplane.throttle_gone rename to throttle')
  const learned = await eventually('B refuses the address', SPREAD_MS, async () => {
    const reply = await health(b.baseUrlOf(project.ref), project.anonKey, ATTACKER)
    return reply.status === 429 ? reply : undefined
  })
  t.same(learned.body, refusedBody, 'A wrote its block once the catalogue answered, and B enforces it')
  t.equal((await health(b.baseUrlOf(project.ref), project.anonKey, NEIGHBOUR)).status, 200, 'B serves another address')
  t.ok(
    await eventually('A logs that it syncs again', SPREAD_MS, async () => logged.find((line) => line.message === 'the throttle syncs with the catalogue again')),
    'A logs that it syncs again',
  )
})

t.test('stopping writes what is pending, and a process that starts learns the blocks in force', async (t) => {
  // A block that outlasts starting another process on a loaded machine: this
  // test asks whether the newcomer learns it, not when it lifts.
  const a = await startTestPlatform(t, { ...env, BASEPLANE_THROTTLE_BLOCK_SECONDS: '120' })
  const project = await a.createProject({ name: 'Attacked', auth: true })
  const leaving = await a.startAnotherNode()
  leaving.throttle.recordFailure(project.ref, NEIGHBOUR)
  leaving.throttle.recordFailure(project.ref, NEIGHBOUR)
  await leaving.stop()
  t.same(await sharedRow(a.catalogueUrl, project.ref, NEIGHBOUR), { failures: 2, blocked: false }, 'written by the time stop() returns')

  for (let i = 0; i < 6; i++) a.platform.throttle.recordFailure(project.ref, ATTACKER)
  await eventually('A writes its block', SPREAD_MS, async () => ((await sharedRow(a.catalogueUrl, project.ref, ATTACKER))?.blocked ? true : undefined))
  const late = await a.startAnotherNode()
  const reply = await health(`http://127.0.0.1:${late.port}/project/${project.ref}`, project.anonKey, ATTACKER)
  t.same({ status: reply.status, body: reply.body }, { status: 429, body: refusedBody }, 'refused on its first request')
})

t.test('an address that cannot be shared (too long) is counted by its own process and holds up no other', async (t) => {
  const a = await startTestPlatform(t, env)
  const project = await a.createProject({ name: 'Attacked', auth: true })
  const other = await a.startAnotherNode()
  const long = `198.51.100.1-${'x'.repeat(300)}`
  for (let i = 0; i < 6; i++) t.same(await failSignIn(project.baseUrl, project.anonKey, long), failedSignIn, `failure ${i + 1} from the long address`)
  t.same(await failSignIn(project.baseUrl, project.anonKey, NEIGHBOUR), failedSignIn, 'a failure from another address')
  const refused = await health(project.baseUrl, project.anonKey, long)
  t.same({ status: refused.status, body: refused.body }, { status: 429, body: refusedBody }, 'A blocks the long address on its own count')
  t.same(
    await eventually('the other address is written', SPREAD_MS, () => sharedRow(a.catalogueUrl, project.ref, NEIGHBOUR)),
    { failures: 1, blocked: false },
    'the batch with the other address is written',
  )
  const { rows } = await adminQuery<{ n: number }>(a.catalogueUrl, 'select count(*)::int as n from baseplane.throttle where length(address) > 255')
  t.equal(rows[0]!.n, 0, 'the long address is not in the catalogue')
  t.equal((await health(`http://127.0.0.1:${other.port}/project/${project.ref}`, project.anonKey, long)).status, 200, 'another process does not refuse it')
})
