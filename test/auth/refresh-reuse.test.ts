// Refresh token reuse, GoTrue's newest rules (DECISIONS "Auth for apps, round 3"):
// the parent of the current token always gets the current token, an older one
// only within the reuse interval of the last refresh, and past that reuse ends
// the session. Concurrent refreshes of one token all get the same new token.
import t, { type Test } from 'tap'
import { createClient } from '@supabase/supabase-js'
import { setAuthOptions } from '../../control-plane/auth-settings.ts'
import { authFixture, call, type AuthFixture } from './helpers.ts'

/** Lets the catalogue's change notification reach the data plane. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const PASSWORD = 'correct horse battery'
const refresh = (f: AuthFixture, token: string) => call(f, 'POST', '/token?grant_type=refresh_token', { refresh_token: token })

t.test('refresh token reuse', async (t) => {
  const f = await authFixture(t)
  const created = await f.admin().auth.admin.createUser({ email: 'erin@example.test', password: PASSWORD, email_confirm: true })
  t.error(created.error)
  const signIn = async () => (await f.anon().auth.signInWithPassword({ email: 'erin@example.test', password: PASSWORD })).data.session!
  /** Refreshes `token` once, as a client that keeps the answer: the new refresh token. */
  const rotate = async (t: Test, token: string) => {
    const r = await refresh(f, token)
    t.equal(r.status, 200, 'a normal refresh')
    return r.body.refresh_token
  }

  await t.test('concurrent refreshes of one token all get the same new token', async (t) => {
    const session = await signIn()
    const results = await Promise.all(Array.from({ length: 8 }, () => refresh(f, session.refresh_token)))
    t.same(results.map((r) => r.status), Array(8).fill(200), 'every refresh succeeds')
    const tokens = new Set(results.map((r) => r.body.refresh_token))
    t.equal(tokens.size, 1, 'one new refresh token')
    t.not([...tokens][0], session.refresh_token)
    for (const r of results) {
      t.same(Object.keys(r.body).sort(), ['access_token', 'expires_at', 'expires_in', 'refresh_token', 'token_type', 'user'], 'the shape of a refresh')
      t.equal((await call(f, 'GET', '/user', undefined, { token: r.body.access_token })).status, 200, 'each access token works')
    }
    const next = await refresh(f, [...tokens][0]!)
    t.equal(next.status, 200, 'the shared token rotates as usual')
    t.not(next.body.refresh_token, [...tokens][0])
  })

  await t.test('a grandparent within the interval gets the current token', async (t) => {
    const session = await signIn()
    const child = await rotate(t, session.refresh_token)
    const current = await rotate(t, child)
    const reused = await refresh(f, session.refresh_token)
    t.equal(reused.status, 200)
    t.equal(reused.body.refresh_token, current, 'the current token, no new one')
    t.equal(reused.body.user.id, created.data.user!.id)
    t.equal((await call(f, 'GET', '/user', undefined, { token: reused.body.access_token })).status, 200)
    t.equal((await refresh(f, current)).status, 200, 'the current token still rotates')
  })

  await t.test('two supabase-js clients sharing one session refresh at once and both stay signed in', async (t) => {
    const session = await signIn()
    const clients = [0, 1].map(() => {
      const store = new Map<string, string>()
      const client = createClient(f.project.baseUrl, f.project.anonKey, {
        auth: {
          persistSession: true, autoRefreshToken: false, detectSessionInUrl: false,
          storage: { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => void store.set(k, v), removeItem: (k) => void store.delete(k) },
        },
      })
      return client
    })
    for (const client of clients) t.error((await client.auth.setSession({ access_token: session.access_token, refresh_token: session.refresh_token })).error)
    const refreshed = await Promise.all(clients.map((client) => client.auth.refreshSession()))
    for (const r of refreshed) t.error(r.error)
    t.equal(refreshed[0]!.data.session?.refresh_token, refreshed[1]!.data.session?.refresh_token, 'the same new refresh token')
    for (const client of clients) {
      const { data } = await client.auth.getSession()
      t.ok(data.session, 'still signed in')
      const user = await client.auth.getUser()
      t.error(user.error)
      t.equal(user.data.user?.id, created.data.user!.id)
    }
  })

  await setAuthOptions(f.test.platform.controlPlane, f.project.ref, { refresh_token_reuse_interval_seconds: 1 })
  await settle()

  await t.test('the parent of the current token gets it after the interval', async (t) => {
    const session = await signIn()
    const current = await rotate(t, session.refresh_token)
    await sleep(1500)
    const reused = await refresh(f, session.refresh_token)
    t.equal(reused.status, 200)
    t.equal(reused.body.refresh_token, current)
    t.same(Object.keys(reused.body).sort(), ['access_token', 'expires_at', 'expires_in', 'refresh_token', 'token_type', 'user'])
    t.equal((await refresh(f, current)).status, 200, 'the current token still rotates')
  })

  await t.test('a grandparent after the interval ends the session', async (t) => {
    const session = await signIn()
    const child = await rotate(t, session.refresh_token)
    const current = await refresh(f, child)
    t.equal(current.status, 200)
    await sleep(1500)
    const reused = await refresh(f, session.refresh_token)
    t.same([reused.status, reused.body.code, reused.body.message], [400, 'refresh_token_already_used', 'Invalid Refresh Token: Already Used'])
    const family = await refresh(f, current.body.refresh_token)
    t.same([family.status, family.body.code], [400, 'refresh_token_not_found'], 'the current token stops working')
    const parent = await refresh(f, child)
    t.same([parent.status, parent.body.code], [400, 'refresh_token_not_found'])
    const access = await call(f, 'GET', '/user', undefined, { token: current.body.access_token })
    t.same([access.status, access.body.code], [403, 'session_not_found'], 'and so does its access token')
  })
})
