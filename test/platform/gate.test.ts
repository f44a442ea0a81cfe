import t from 'tap'
import { SignJWT, decodeProtectedHeader, jwtVerify } from 'jose'
import { signJwt, signWithKey, verifyJwt } from '../../lib/jwt.ts'
import { request, type ErrorBody } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const platform = await startTestPlatform(t)
const a = await platform.createProject({ name: 'A', auth: true })
const b = await platform.createProject({ name: 'B', auth: true })
const health = (project: { baseUrl: string }, headers: Record<string, string>) => request(`${project.baseUrl}/auth/v1/health`, { headers })
const now = () => Math.floor(Date.now() / 1000)

t.test('signJwt writes an HS256 JWS that jose verifies; a changed byte fails', async (t) => {
  const claims = { sub: 'ü-user', role: 'authenticated', exp: now() + 60, app_metadata: { provider: 'email', providers: ['email'] } }
  const token = signJwt(a.record.jwtSecret, claims)
  t.strictSame(decodeProtectedHeader(token), { alg: 'HS256', typ: 'JWT' })
  t.strictSame((await jwtVerify(token, new TextEncoder().encode(a.record.jwtSecret), { algorithms: ['HS256'] })).payload, claims)
  t.strictSame(await verifyJwt(a.record.jwtSecret, token), claims)
  const [header, , signature] = token.split('.')
  const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, role: 'service_role' })).toString('base64url')}.${signature}`
  await t.rejects(verifyJwt(a.record.jwtSecret, tampered), { code: 'bad_jwt', message: 'Invalid JWT: signature is invalid' })
})

t.test("verifyJwt takes the project's signing keys by kid and its secret for HS256; a secret alone takes HS256 only", async (t) => {
  const claims = { sub: 'u', role: 'authenticated', exp: now() + 60 }
  const key = a.record.signingKeys[0]!
  const es256 = signWithKey(key, claims)
  t.strictSame(decodeProtectedHeader(es256), { alg: 'ES256', kid: key.kid, typ: 'JWT' })
  t.strictSame(await verifyJwt(a.record, es256), claims)
  t.strictSame(await verifyJwt(a.record, signJwt(a.record.jwtSecret, claims)), claims)
  await t.rejects(verifyJwt(a.record.jwtSecret, es256), { code: 'bad_jwt', message: `Invalid JWT: signing key ${key.kid} is unknown` })
  await t.rejects(verifyJwt(b.record, es256), { code: 'bad_jwt', message: `Invalid JWT: signing key ${key.kid} is unknown` })
})

t.test('platform and project health', async (t) => {
  const platformHealth = await request(`${platform.origin}/health`)
  t.same({ status: platformHealth.status, body: platformHealth.json }, { status: 200, body: { status: 'ok', version: '0.6.0' } })
  const projectHealth = await request(`${a.baseUrl}/health`, { headers: { apikey: a.anonKey } })
  t.same(projectHealth.json, { status: 'ok', ref: a.ref, plan: 'free', services: { auth: true, graphql: true, push: false, rest: true, storage: true }, database: 'up' })
  t.equal((await request(`${a.baseUrl}/health`)).status, 401, 'project health needs the apikey')
})

t.test('the project comes from the Host label or the /project/<ref>/ prefix', async (t) => {
  const byHost = await request(`${platform.origin}/auth/v1/health`, { headers: { host: `${a.ref}.localhost`, apikey: a.anonKey } })
  t.equal(byHost.status, 200)
  const byPath = await health(a, { apikey: a.anonKey })
  t.equal(byPath.status, 200)
  const unknown = await request(`${platform.origin}/project/nosuchproject/graphql/v1`, { headers: { apikey: a.anonKey }, body: {} })
  t.same({ status: unknown.status, body: unknown.json }, { status: 404, body: { code: 'project_not_found', message: 'Project "nosuchproject" not found' } })
  const none = await request<ErrorBody>(`${platform.origin}/auth/v1/health`)
  t.equal(none.status, 404)
  t.equal(none.json.code, 'project_not_found')
  const strayPath = await request<ErrorBody>(`${a.baseUrl}/stray/v1/things`, { headers: { apikey: a.anonKey } })
  t.same({ status: strayPath.status, code: strayPath.json.code }, { status: 404, code: 'not_found' })
})

t.test('key failures answer 401 with a JSON body', async (t) => {
  const expired = await signJwt(a.record.jwtSecret, { role: 'authenticated', sub: 'u', iat: now() - 7200, exp: now() - 3600 })
  const otherProjects = await signJwt(b.record.jwtSecret, { role: 'authenticated', sub: 'u', exp: now() + 3600 })
  const forged = await signJwt('not-the-secret-not-the-secret-not-the-secret', { role: 'service_role', exp: now() + 3600 })
  const unsigned = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ role: 'service_role', exp: now() + 3600 })).toString('base64url')}.`
  const wrongAlg = await new SignJWT({ role: 'service_role' }).setProtectedHeader({ alg: 'HS512' }).sign(new TextEncoder().encode(a.record.jwtSecret))
  const badRole = await signJwt(a.record.jwtSecret, { role: 'postgres', exp: now() + 3600 })
  const cases: Array<[string, Record<string, string>, string, string]> = [
    ['no apikey', {}, 'no_api_key', 'No API key found in request'],
    ['forged apikey', { apikey: forged }, 'invalid_api_key', 'Invalid API key'],
    ["another project's apikey", { apikey: b.anonKey }, 'invalid_api_key', 'Invalid API key'],
    ["another project's service key", { apikey: b.serviceRoleKey }, 'invalid_api_key', 'Invalid API key'],
    ['expired token', { apikey: a.anonKey, authorization: `Bearer ${expired}` }, 'bad_jwt', 'Invalid JWT: token has expired'],
    ["another project's token", { apikey: a.anonKey, authorization: `Bearer ${otherProjects}` }, 'bad_jwt', 'Invalid JWT: signature is invalid'],
    ['forged token', { apikey: a.anonKey, authorization: `Bearer ${forged}` }, 'bad_jwt', 'Invalid JWT: signature is invalid'],
    ['alg none', { apikey: a.anonKey, authorization: `Bearer ${unsigned}` }, 'bad_jwt', 'Invalid JWT: signing algorithm is not allowed'],
    ['HS512', { apikey: a.anonKey, authorization: `Bearer ${wrongAlg}` }, 'bad_jwt', 'Invalid JWT: signing algorithm is not allowed'],
    ['role outside the API roles', { apikey: a.anonKey, authorization: `Bearer ${badRole}` }, 'bad_jwt', 'Invalid JWT: role claim must be anon, authenticated or service_role'],
    ['not a bearer header', { apikey: a.anonKey, authorization: 'Basic abc' }, 'bad_jwt', 'Invalid JWT: Authorization header must be "Bearer <token>"'],
  ]
  for (const [name, headers, code, message] of cases) {
    const reply = await request<ErrorBody | undefined>(`${a.baseUrl}/graphql/v1`, { headers, body: { query: '{ __typename }' } })
    t.same({ status: reply.status, code: reply.json?.code, message: reply.json?.message, header: reply.headers['x-sb-error-code'] }, { status: 401, code, message, header: code }, name)
  }
})

t.test('auth answers gate refusals in GoTrue error shapes', async (t) => {
  const plain = await health(a, {})
  t.same(plain.json, { code: 401, error_code: 'no_api_key', msg: 'No API key found in request' })
  const versioned = await health(a, { 'x-supabase-api-version': '2024-01-01' })
  t.same(versioned.json, { code: 'no_api_key', message: 'No API key found in request' })
  t.equal(versioned.headers['x-supabase-api-version'], '2024-01-01')
  t.equal(versioned.headers['x-sb-error-code'], 'no_api_key')
  const expired = await signJwt(a.record.jwtSecret, { role: 'authenticated', sub: 'u', exp: now() - 60 })
  const badToken = await request(`${a.baseUrl}/auth/v1/user`, { headers: { apikey: a.anonKey, authorization: `Bearer ${expired}`, 'x-supabase-api-version': '2024-01-01' } })
  t.same(
    { status: badToken.status, body: badToken.json },
    { status: 403, body: { code: 'bad_jwt', message: 'invalid JWT: unable to parse or verify signature, token has expired' } },
    'a token Auth cannot verify answers as GoTrue does',
  )
})

t.test('valid keys and tokens pass; the apikey query parameter works too', async (t) => {
  const user = await signJwt(a.record.jwtSecret, { role: 'authenticated', sub: '00000000-0000-4000-8000-000000000001', exp: now() + 3600 })
  t.equal((await health(a, { apikey: a.anonKey })).status, 200)
  t.equal((await health(a, { apikey: a.serviceRoleKey })).status, 200)
  t.equal((await health(a, { apikey: a.anonKey, authorization: `Bearer ${user}` })).status, 200)
  t.equal((await health(a, { apikey: a.anonKey, authorization: `Bearer ${a.anonKey}` })).status, 200)
  t.equal((await request(`${a.baseUrl}/auth/v1/health?apikey=${a.anonKey}`)).status, 200)
})

t.test('links a browser opens need no apikey; CORS preflight is answered', async (t) => {
  const verify = await request(`${a.baseUrl}/auth/v1/verify?token=x&type=signup`)
  t.not(verify.status, 401, 'GET /verify reaches the auth service without a key')
  const preflight = await request(`${a.baseUrl}/auth/v1/token`, { method: 'OPTIONS', headers: { origin: 'http://app.test', 'access-control-request-method': 'POST' } })
  t.equal(preflight.status, 204)
  t.equal(preflight.headers['access-control-allow-origin'], '*')
  t.match(preflight.headers['access-control-allow-headers'], /apikey/)
  t.match(preflight.headers['access-control-allow-headers'], /x-retry-count, traceparent, tracestate, baggage/, 'supabase-js 2.119 may send retry counts and trace context')
  const fromBrowser = await request(`${a.baseUrl}/auth/v1/health`, { headers: { apikey: a.anonKey, origin: 'http://app.test' } })
  t.equal(fromBrowser.headers['access-control-allow-origin'], '*', 'answers to a browser carry CORS headers')
  const refused = await request(`${a.baseUrl}/auth/v1/health`, { headers: { origin: 'http://app.test' } })
  t.equal(refused.headers['access-control-allow-origin'], '*', 'so do refusals, so the browser can read them')
})

t.test('a product that is off answers with a clear error', async (t) => {
  const off = await platform.createProject({ name: 'Off' })
  const reply = await health(off, { apikey: off.anonKey, 'x-supabase-api-version': '2024-01-01' })
  t.same({ status: reply.status, body: reply.json }, { status: 503, body: { code: 'product_disabled', message: `Auth is not enabled for project ${off.ref}` } })
  const push = await request<ErrorBody>(`${off.baseUrl}/push/v1/devices`, { headers: { apikey: off.anonKey } })
  t.same({ status: push.status, code: push.json.code, hint: push.json.hint }, { status: 503, code: 'product_disabled', hint: `Enable it with: baseplane products enable push ${off.ref}` })
})

t.test('bodies over 1 MiB are refused', async (t) => {
  const reply = await request<ErrorBody>(`${a.baseUrl}/graphql/v1`, { headers: { apikey: a.anonKey }, body: JSON.stringify({ query: 'x'.repeat(1024 * 1024 + 10) }) })
  t.same({ status: reply.status, code: reply.json.code }, { status: 413, code: 'request_too_large' })
})
