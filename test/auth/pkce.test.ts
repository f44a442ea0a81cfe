// PKCE code exchange (issue 15 item 2): a wrong code_verifier does not spend
// the code, the right one still works afterwards (with supabase-js's own
// exchangeCodeForSession), two flows in flight are told apart by the flow id
// supabase-js puts on the redirect, a code is redeemed once even when the
// right verifier arrives many times at once, and an expired flow is refused.
import crypto from 'node:crypto'
import { createClient } from '@supabase/supabase-js'
import t from 'tap'
import { runInProjectDatabase } from '../../control-plane/project-database.ts'
import { authFixture, call, linkOf, type AuthFixture } from './helpers.ts'

const CALLBACK = 'http://localhost:3000/cb'

function pkcePair() {
  const verifier = crypto.randomBytes(56).toString('hex')
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') }
}

/** A magic-link flow started with `challenge`: the auth code the emailed link lands with. */
async function codeFor(f: AuthFixture, email: string, challenge: string): Promise<string> {
  const since = f.mail.messages.length
  const r = await call(f, 'POST', `/otp?redirect_to=${encodeURIComponent(CALLBACK)}`, { email, code_challenge: challenge, code_challenge_method: 's256' })
  if (r.status !== 200) throw new Error(`otp: ${r.status} ${JSON.stringify(r.body)}`)
  const location = (await fetch(linkOf(await f.mail.next(email, since)), { redirect: 'manual' })).headers.get('location')!
  const code = new URL(location).searchParams.get('code')
  if (!code) throw new Error(`no code in ${location}`)
  return code
}

async function flowRows(f: AuthFixture, code: string): Promise<number> {
  const cp = f.test.platform.controlPlane
  return runInProjectDatabase(await cp.serverUrl(f.project.record.dbServer), f.project.record.dbName, async (client) => {
    const { rowCount } = await client.query('select 1 from auth.flow_state where auth_code = $1', [code])
    return rowCount ?? 0
  })
}

t.test('PKCE exchange', async (t) => {
  const f = await authFixture(t)

  await t.test('a wrong verifier keeps the code; supabase-js then exchanges it', async (t) => {
    const storage = new Map<string, string>()
    const client = createClient(f.project.baseUrl, f.project.anonKey, {
      auth: { flowType: 'pkce', persistSession: true, autoRefreshToken: false, detectSessionInUrl: false, storage: { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => void storage.set(k, v), removeItem: (k) => void storage.delete(k) } },
    })
    const email = 'wrong-then-right@example.test'
    const since = f.mail.messages.length
    const sent = await client.auth.signInWithOtp({ email, options: { emailRedirectTo: CALLBACK } })
    t.error(sent.error)
    const location = (await fetch(linkOf(await f.mail.next(email, since)), { redirect: 'manual' })).headers.get('location')!
    const code = new URL(location).searchParams.get('code')!
    t.ok(code, location)

    for (const wrong of ['x'.repeat(50), pkcePair().verifier]) {
      const bad = await call(f, 'POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: wrong })
      t.same([bad.status, bad.body.code, bad.body.message], [400, 'bad_code_verifier', 'code challenge does not match previously saved code verifier'])
    }
    t.equal(await flowRows(f, code), 1, 'the flow is still there')

    const { data, error } = await client.auth.exchangeCodeForSession(code)
    t.error(error)
    t.equal(data.user?.email, email)
    t.ok(data.session?.access_token)
    t.equal(await flowRows(f, code), 0, 'spent by the right verifier')

    const again = await call(f, 'POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: 'x'.repeat(50) })
    t.same([again.status, again.body.code, again.body.message], [404, 'flow_state_not_found', 'invalid flow state, no valid flow state found'])
  })

  await t.test('two emailed flows at once, told apart by sb_flow_id (auth-js 2.119 experimental.appendPkceFlowIdToRedirects)', async (t) => {
    const storage = new Map<string, string>()
    const client = createClient(f.project.baseUrl, f.project.anonKey, {
      auth: {
        flowType: 'pkce', persistSession: true, autoRefreshToken: false, detectSessionInUrl: false,
        storage: { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => void storage.set(k, v), removeItem: (k) => void storage.delete(k) },
        experimental: { appendPkceFlowIdToRedirects: true },
      },
    })
    const emails = ['first-flow@example.test', 'second-flow@example.test']
    const links: string[] = []
    for (const email of emails) {
      const since = f.mail.messages.length
      t.error((await client.auth.signInWithOtp({ email, options: { emailRedirectTo: CALLBACK } })).error)
      links.push(linkOf(await f.mail.next(email, since)))
    }
    t.equal([...storage.keys()].filter((k) => /-flow-[0-9a-f]{32}-code-verifier$/.test(k)).length, 2, 'a verifier per flow')
    for (const [i, email] of emails.entries()) {
      const location = new URL((await fetch(links[i]!, { redirect: 'manual' })).headers.get('location')!)
      t.equal(`${location.origin}${location.pathname}`, CALLBACK)
      const flowId = location.searchParams.get('sb_flow_id')
      t.match(flowId, /^[0-9a-f]{32}$/, 'the flow id the app put on its redirect comes back beside the code')
      const { data, error } = await client.auth.exchangeCodeForSession(location.searchParams.get('code')!, { flowId: flowId! })
      t.error(error)
      t.equal(data.user?.email, email, 'each code with its own flow\'s verifier')
    }
  })

  await t.test('the right verifier many times at once: exactly one session', async (t) => {
    const { verifier, challenge } = pkcePair()
    const code = await codeFor(f, 'race@example.test', challenge)
    const attempts = await Promise.all([
      ...Array.from({ length: 6 }, () => call(f, 'POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: verifier })),
      ...Array.from({ length: 2 }, () => call(f, 'POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: 'y'.repeat(60) })),
    ])
    const right = attempts.slice(0, 6)
    const won = right.filter((r) => r.status === 200)
    t.equal(won.length, 1, 'one exchange wins')
    t.equal(won[0]!.body.user.email, 'race@example.test')
    for (const r of right.filter((r) => r.status !== 200)) t.same([r.status, r.body.code], [404, 'flow_state_not_found'])
    for (const r of attempts.slice(6)) t.ok([400, 404].includes(r.status) && ['bad_code_verifier', 'flow_state_not_found'].includes(r.body.code as string), `a wrong verifier: ${r.body.code}`)
  })

  await t.test('refusals: missing fields, unknown code, expired flow', async (t) => {
    const missing = await call(f, 'POST', '/token?grant_type=pkce', { auth_code: '', code_verifier: 'x'.repeat(50) })
    t.same([missing.status, missing.body.code, missing.body.message], [400, 'validation_failed', 'invalid request: both auth code and code verifier should be non-empty'])
    const unknown = await call(f, 'POST', '/token?grant_type=pkce', { auth_code: crypto.randomUUID(), code_verifier: 'x'.repeat(50) })
    t.same([unknown.status, unknown.body.code], [404, 'flow_state_not_found'])

    const { verifier, challenge } = pkcePair()
    const code = await codeFor(f, 'late@example.test', challenge)
    const cp = f.test.platform.controlPlane
    await runInProjectDatabase(await cp.serverUrl(f.project.record.dbServer), f.project.record.dbName, (client) =>
      client.query(`update auth.flow_state set auth_code_issued_at = now() - interval '301 seconds', created_at = now() - interval '301 seconds' where auth_code = $1`, [code]),
    )
    const expired = await call(f, 'POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: verifier })
    t.same([expired.status, expired.body.code, expired.body.message], [422, 'flow_state_expired', 'invalid flow state, flow state has expired'])
  })
})
