// Turning auth on, and the per-address throttle: repeated 4xx answers from
// sign-in, sign-up, recovery, OTP and verification get the address refused
// by every service of the project (429 over_request_rate_limit), anon key or
// not; behind a proxy the address comes from the configured header only.
import t from 'tap'
import { startTestPlatform } from '../helpers/platform.ts'
import type { AuthBody } from './helpers.ts'
import { setProjectProduct } from '../../control-plane/projects.ts'

async function post(url: string, key: string, body: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(url, { method: 'POST', headers: { apikey: key, 'content-type': 'application/json', 'x-supabase-api-version': '2024-01-01', ...headers }, body: JSON.stringify(body) })
  return { status: r.status, body: (await r.json().catch(() => undefined)) as AuthBody | undefined, headers: r.headers }
}

t.test('auth is off until enabled, and on at once', async (t) => {
  const test = await startTestPlatform(t)
  const project = await test.createProject()
  const before = await post(`${project.baseUrl}/auth/v1/signup`, project.anonKey, { email: 'a@example.test', password: 'password1' })
  t.equal(before.status, 503)
  t.equal(before.body?.code, 'product_disabled')
  t.match(before.body?.message, `Auth is not enabled for project ${project.ref}`)
  await setProjectProduct(test.platform.controlPlane, project.ref, 'auth', true)
  const after = await post(`${project.baseUrl}/auth/v1/signup`, project.anonKey, { email: 'a@example.test', password: 'password1' })
  t.equal(after.status, 200, 'the next request is served')
})

t.test('repeated failures refuse the address on every service of the project', async (t) => {
  const test = await startTestPlatform(t, { BASEPLANE_THROTTLE_MAX_FAILURES: '4', BASEPLANE_TRUSTED_PROXIES: '127.0.0.1' })
  const project = await test.createProject({ auth: true })
  const other = await test.createProject({ auth: true })
  const attacker = { 'x-forwarded-for': '203.0.113.7' }
  const auth = (path: string) => `${project.baseUrl}/auth/v1${path}`
  // One failure from each throttled family.
  t.equal((await post(auth('/token?grant_type=password'), project.anonKey, { email: 'x@example.test', password: 'bad password' }, attacker)).status, 400)
  t.equal((await post(auth('/signup'), project.anonKey, { email: 'bad', password: 'password1' }, attacker)).status, 400)
  t.equal((await post(auth('/recover'), project.anonKey, {}, attacker)).status, 400)
  // Failed refreshes and successful answers do not count.
  t.equal((await post(auth('/token?grant_type=refresh_token'), project.anonKey, { refresh_token: 'abcdefghijklmnop' }, attacker)).status, 400)
  t.equal((await post(auth('/recover'), project.anonKey, { email: 'nobody@example.test' }, attacker)).status, 200)
  t.equal((await post(auth('/otp'), project.anonKey, { email: 'x@example.test', create_user: false }, attacker)).status, 422, 'the fourth failure')
  const refused = await post(auth('/verify'), project.anonKey, { type: 'email', email: 'x@example.test', token: '123456' }, attacker)
  t.equal(refused.status, 429)
  t.same(refused.body, { code: 'over_request_rate_limit', message: 'Request rate limit reached' })
  t.ok(Number(refused.headers.get('retry-after')) > 0)
  const settings = await fetch(auth('/settings'), { headers: { apikey: project.serviceRoleKey, ...attacker } })
  t.equal(settings.status, 429, 'every auth endpoint, even with the service_role key')
  const graphql = await fetch(`${project.baseUrl}/graphql/v1`, { method: 'POST', headers: { apikey: project.anonKey, 'content-type': 'application/json', ...attacker }, body: '{"query":"{__typename}"}' })
  t.equal(graphql.status, 429, 'graphql refuses the address too')
  t.equal(graphql.headers.get('x-sb-error-code'), 'over_request_rate_limit')
  const push = await fetch(`${project.baseUrl}/push/v1/devices`, { headers: { apikey: project.anonKey, ...attacker } })
  t.equal(push.status, 429, 'push refuses the address too')
  const link = await fetch(auth('/verify?token=x&type=signup'), { redirect: 'manual', headers: attacker })
  t.equal(link.status, 429, 'open links too')
  const neighbour = await post(auth('/recover'), project.anonKey, { email: 'someone@example.test' }, { 'x-forwarded-for': '203.0.113.8' })
  t.equal(neighbour.status, 200, 'other addresses are served')
  const elsewhere = await post(`${other.baseUrl}/auth/v1/recover`, other.anonKey, { email: 'someone@example.test' }, attacker)
  t.equal(elsewhere.status, 200, 'other projects are not affected')
})

t.test('without a trusted header, a forwarded-for header does not change the address', async (t) => {
  const test = await startTestPlatform(t, { BASEPLANE_THROTTLE_MAX_FAILURES: '2' })
  const project = await test.createProject({ auth: true })
  for (let i = 0; i < 2; i++) {
    const r = await post(`${project.baseUrl}/auth/v1/token?grant_type=password`, project.anonKey, { email: 'x@example.test', password: 'bad password' }, { 'x-forwarded-for': `198.51.100.${i}` })
    t.equal(r.status, 400)
  }
  const r = await post(`${project.baseUrl}/auth/v1/token?grant_type=password`, project.anonKey, { email: 'x@example.test', password: 'bad password' }, { 'x-forwarded-for': '198.51.100.99' })
  t.equal(r.status, 429, 'the peer address was counted, not the header')
  test.platform.throttle.reset(project.ref)
})
