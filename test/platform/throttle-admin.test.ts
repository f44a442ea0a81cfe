// Wrong admin tokens are throttled per client address; a right one never is (issue 36 item 6): behind a
// reverse proxy every request may come from one address, and anyone's wrong guesses must not lock the
// operator out of the admin API, the dashboard or /metrics.
import t from 'tap'
import { request, type ErrorBody } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const LIMIT = 5
const WRONG = 'wrong'.repeat(8)

t.test('after wrong admin tokens from an address, the right token is served at once there; the wrong ones wait', async (t) => {
  const fixture = await startTestPlatform(t, { BASEPLANE_THROTTLE_MAX_FAILURES: String(LIMIT), BASEPLANE_TRUSTED_PROXIES: '127.0.0.1' })
  const token = fixture.config.adminToken!
  const host = new URL(fixture.origin).host
  // `address`: the client as the trusted proxy (this test, from 127.0.0.1) names it; undefined: the peer itself.
  const forwarded = (address: string | undefined): Record<string, string> => (address ? { 'x-forwarded-for': address } : {})
  const admin = (bearer: string, address?: string) =>
    request<ErrorBody>(`${fixture.origin}/platform/v1/projects`, { headers: { authorization: `Bearer ${bearer}`, ...forwarded(address) } })
  const metrics = (bearer: string, address?: string) => request<ErrorBody>(`${fixture.origin}/metrics`, { headers: { authorization: `Bearer ${bearer}`, ...forwarded(address) } })
  const signIn = (form: string, address?: string) =>
    request(`${fixture.origin}/dashboard/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: fixture.origin, host, ...forwarded(address) },
      body: form,
    })

  for (const address of ['203.0.113.7', undefined]) {
    const who = address ?? 'the proxy itself (everyone, without X-Forwarded-For)'
    for (let i = 0; i < LIMIT; i++) t.equal((await admin(WRONG, address)).status, 401, `${who}: wrong token ${i + 1} answers 401`)
    const refused = await admin(WRONG, address)
    t.same({ status: refused.status, code: refused.json.code, retry: Number(refused.headers['retry-after']) > 0 }, { status: 429, code: 'over_request_rate_limit', retry: true }, `${who}: then a wrong token answers 429 with Retry-After`)
    t.equal((await metrics(WRONG, address)).status, 429, `${who}: so does a wrong token on /metrics`)
    t.equal((await signIn(`token=${WRONG}`, address)).status, 429, `${who}: and a wrong dashboard sign-in`)

    const served = await admin(token, address)
    t.same({ status: served.status, error: served.status === 200 ? null : served.text }, { status: 200, error: null }, `${who}: the right token on the admin API answers 200 at once`)
    const scraped = await metrics(token, address)
    t.same({ status: scraped.status, error: scraped.status === 200 ? null : scraped.text }, { status: 200, error: null }, `${who}: the right token on /metrics answers 200`)
    const signedIn = await signIn(`token=${encodeURIComponent(token)}`, address)
    t.equal(signedIn.status, 303, `${who}: the dashboard sign-in with the right token goes through`)
    const cookie = String(signedIn.headers['set-cookie'] ?? '').split(';')[0]!
    t.ok(cookie.includes('='), `${who}: with a session cookie`)
    const page = await request(`${fixture.origin}/dashboard`, { headers: { cookie, ...forwarded(address) } })
    t.equal(page.status, 200, `${who}: and the dashboard answers 200 with it`)
    t.match(page.text, /Sign out|logout/i, `${who}: signed in`)
  }
  t.equal((await admin(WRONG, '198.51.100.9')).status, 401, 'another address behind the proxy still has its own count')
})
