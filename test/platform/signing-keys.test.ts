// Asymmetric signing keys (issue 15 item 7): ES256 (or RS256) access tokens
// with a kid, the JWKS that supabase-js's getClaims() verifies them with
// locally, the gate's refusals (another project's key, an unknown kid, alg
// none, HS256 "signed" with a public key), rotation through the admin API,
// and projects made before signing keys existed.
import crypto from 'node:crypto'
import t from 'tap'
import { createClient } from '@supabase/supabase-js'
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import { setAuthOptions } from '../../control-plane/auth-settings.ts'
import { dropExpiredSigningKeys, newSigningKey, STANDBY_SECONDS, type SigningKeysView } from '../../control-plane/signing-keys.ts'
import { publicJwkOf, signerOf, signingKeyState, signJwt, signWithKey, type SigningKey } from '../../lib/jwt.ts'
import { runCli } from '../helpers/cli.ts'
import { request, type ErrorBody } from '../helpers/http.ts'
import { startTestPlatform, type TestProject } from '../helpers/platform.ts'
import { createProject, setProjectProduct } from '../../control-plane/projects.ts'

const platform = await startTestPlatform(t)
const { controlPlane } = platform.platform
const admin = `${platform.origin}/platform/v1`
const adminAuth = { authorization: `Bearer ${platform.config.adminToken}` }
const now = () => Math.floor(Date.now() / 1000)

async function authProject(name: string, signingAlg?: string): Promise<TestProject> {
  const project = signingAlg === undefined ? await platform.createProject({ name, auth: true }) : await (async () => {
    const created = await createProject(controlPlane, { name, signingAlg })
    const record = await setProjectProduct(controlPlane, created.ref, 'auth', true)
    return { record, ref: record.ref, baseUrl: `${platform.origin}/project/${record.ref}`, anonKey: record.anonKey, serviceRoleKey: record.serviceRoleKey }
  })()
  await setAuthOptions(controlPlane, project.ref, { mailer_autoconfirm: true })
  return project
}

const a = await authProject('A')
const b = await authProject('B')

interface Jwks {
  keys: Array<Record<string, unknown>>
}

/** supabase-js on `project`, recording the paths it asks for. */
function client(project: TestProject) {
  const paths: string[] = []
  const supabase = createClient(project.baseUrl, project.anonKey, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    global: {
      fetch: (input, init) => {
        paths.push(new URL(input instanceof Request ? input.url : String(input)).pathname.replace(`/project/${project.ref}`, ''))
        return fetch(input, init)
      },
    },
  })
  return { supabase, paths }
}

let users = 0
async function signUp(project: TestProject) {
  const { supabase, paths } = client(project)
  const email = `user${++users}@example.test`
  const { data, error } = await supabase.auth.signUp({ email, password: 'correct horse battery' })
  if (error !== null || data.session === null) throw new Error(`sign-up failed: ${error?.message}`)
  return { supabase, paths, session: data.session, email }
}

const jwksOf = (project: TestProject, headers: Record<string, string> = {}) => request<Jwks>(`${project.baseUrl}/auth/v1/.well-known/jwks.json`, { headers })
const listed = async (project: TestProject) => (await request<SigningKeysView>(`${admin}/projects/${project.ref}/signing-keys`, { headers: adminAuth })).json
const rotate = (project: TestProject, body: object = {}) =>
  request<SigningKeysView & ErrorBody>(`${admin}/projects/${project.ref}/signing-keys/rotate`, { method: 'POST', headers: adminAuth, body })
/** A GraphQL request through the gate with `token` as the Bearer. */
const gate = (project: TestProject, token: string) =>
  request<ErrorBody & { data?: unknown }>(`${project.baseUrl}/graphql/v1`, { headers: { apikey: project.anonKey, authorization: `Bearer ${token}` }, body: { query: '{ __typename }' } })
const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')

t.test('a new project has one ES256 key in use, published without an apikey', async (t) => {
  const reply = await jwksOf(a)
  t.equal(reply.status, 200)
  t.equal(reply.headers['cache-control'], 'public, max-age=600')
  t.equal(reply.json.keys.length, 1)
  const jwk = reply.json.keys[0]!
  t.same(Object.keys(jwk).sort(), ['alg', 'crv', 'key_ops', 'kid', 'kty', 'use', 'x', 'y'], 'public members only: no d')
  t.match(jwk, { kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', key_ops: ['verify'], kid: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/ })
  const view = await listed(a)
  t.equal(view.keys.length, 1)
  t.match(view.keys[0], { kid: jwk.kid, alg: 'ES256', state: 'in_use', retires_at: null, drops_at: null })
  t.notOk(JSON.stringify(view).includes(a.record.signingKeys[0]!.privateJwk.d!), 'the listing shows no private key')
  const withKey = await jwksOf(a, { apikey: a.anonKey })
  t.same(withKey.json, reply.json, 'the same with an apikey')
  const foreign = await jwksOf(a, { apikey: b.anonKey })
  t.equal(foreign.status, 401, "another project's apikey is still refused")
})

t.test('supabase-js gets ES256 tokens with a kid, and getClaims() verifies them locally', async (t) => {
  const { supabase, paths, session, email } = await signUp(a)
  const kid = a.record.signingKeys[0]!.kid
  t.same(decodeProtectedHeader(session.access_token), { alg: 'ES256', kid, typ: 'JWT' })
  const before = paths.length
  const { data, error } = await supabase.auth.getClaims()
  t.equal(error, null)
  t.match(data?.claims, { sub: session.user.id, email, role: 'authenticated', aud: 'authenticated', aal: 'aal1', iss: `${a.baseUrl}/auth/v1` })
  t.match(data?.header, { alg: 'ES256', kid })
  t.same(paths.slice(before), ['/auth/v1/.well-known/jwks.json'], 'it fetched the JWKS and did not ask GET /user')
  const jwks = (await jwksOf(a)).json
  const verified = await jwtVerify(session.access_token, createLocalJWKSet(jwks as never), { algorithms: ['ES256'] })
  t.equal(verified.payload.sub, session.user.id, 'jose verifies it with the JWKS too')
  const [header, payload, signature] = session.access_token.split('.')
  const forged = `${header}.${b64({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), role: 'service_role' })}.${signature}`
  const refused = await supabase.auth.getClaims(forged)
  t.equal(refused.data, null)
  t.equal(refused.error?.message, 'Invalid JWT signature', 'a changed claim fails the local check')
  const user = await supabase.auth.getUser()
  t.equal(user.error, null, 'the gate and Auth accept the ES256 token')
  t.equal(user.data.user?.email, email)
  const refreshed = await supabase.auth.refreshSession()
  t.equal(refreshed.error, null)
  t.equal(decodeProtectedHeader(refreshed.data.session!.access_token).kid, kid, 'a refreshed token is signed with the same key')
  t.equal((await gate(a, session.access_token)).status, 200, 'GraphQL takes it')
})

t.test('the gate takes legacy HS256 tokens and refuses everything else', async (t) => {
  const key = a.record.signingKeys[0]!
  const claims = { sub: '00000000-0000-4000-8000-000000000001', role: 'authenticated', aud: 'authenticated', exp: now() + 600 }
  t.equal((await gate(a, signJwt(a.record.jwtSecret, claims))).status, 200, 'HS256 with the legacy secret (API keys, tokens issued before)')
  t.equal((await gate(a, a.anonKey)).status, 200, 'the anon key as Bearer')
  t.equal((await gate(a, signWithKey(key, claims))).status, 200, "ES256 with the project's key")
  const stranger: SigningKey = { ...newSigningKey('ES256'), signsFrom: 0, retiresAt: undefined, dropsAt: undefined, createdAt: 0 }
  const impostor: SigningKey = { ...stranger, kid: key.kid }
  const publicPem = crypto.createPublicKey({ key: key.privateJwk, format: 'jwk' }).export({ format: 'pem', type: 'spki' }).toString()
  const hmac = (header: object, secret: string | Buffer) => {
    const input = `${b64(header)}.${b64(claims)}`
    return `${input}.${crypto.createHmac('sha256', secret).update(input).digest('base64url')}`
  }
  const bKey = b.record.signingKeys[0]!
  const cases: Array<[string, string, string]> = [
    ["a token signed with another project's key", signWithKey(bKey, claims), `signing key ${bKey.kid} is unknown`],
    ['an unknown kid', signWithKey(stranger, claims), `signing key ${stranger.kid} is unknown`],
    ["the project's kid, another key's signature", signWithKey(impostor, claims), 'signature is invalid'],
    ['alg none with the kid', `${b64({ alg: 'none', kid: key.kid, typ: 'JWT' })}.${b64(claims)}.`, 'signing algorithm is not allowed'],
    ['HS256 with the kid, HMAC keyed with the public key (PEM)', hmac({ alg: 'HS256', kid: key.kid, typ: 'JWT' }, publicPem), `signing algorithm HS256 does not match key ${key.kid} (ES256)`],
    ['HS256 with the kid, HMAC keyed with the public JWK', hmac({ alg: 'HS256', kid: key.kid, typ: 'JWT' }, JSON.stringify(publicJwkOf(key))), `signing algorithm HS256 does not match key ${key.kid} (ES256)`],
    ['HS256 without a kid, HMAC keyed with the public key', hmac({ alg: 'HS256', typ: 'JWT' }, publicPem), 'signature is invalid'],
    ['RS256 naming the ES256 kid', `${b64({ alg: 'RS256', kid: key.kid })}.${b64(claims)}.${Buffer.alloc(256).toString('base64url')}`, `signing algorithm RS256 does not match key ${key.kid} (ES256)`],
    ['ES256 without a kid', signWithKey(key, claims).replace(/^[^.]+/, b64({ alg: 'ES256', typ: 'JWT' })), 'a ES256 token must name its signing key (kid)'],
    ['ES384', `${b64({ alg: 'ES384', kid: key.kid })}.${b64(claims)}.${Buffer.alloc(96).toString('base64url')}`, 'signing algorithm is not allowed'],
    ['an expired ES256 token', signWithKey(key, { ...claims, exp: now() - 60 }), 'token has expired'],
  ]
  for (const [name, token, reason] of cases) {
    const reply = await gate(a, token)
    t.same({ status: reply.status, code: reply.json.code, message: reply.json.message }, { status: 401, code: 'bad_jwt', message: `Invalid JWT: ${reason}` }, name)
  }
  const auth = await request<{ code: string; message: string }>(`${a.baseUrl}/auth/v1/user`, {
    headers: { apikey: a.anonKey, authorization: `Bearer ${signWithKey(bKey, claims)}`, 'x-supabase-api-version': '2024-01-01' },
  })
  t.same({ status: auth.status, code: auth.json.code }, { status: 403, code: 'bad_jwt' }, 'Auth answers it in GoTrue shape')
})

t.test('rotation publishes the new key first, signs with it later, and keeps old tokens valid', async (t) => {
  const project = await authProject('Rotating')
  const first = project.record.signingKeys[0]!.kid
  const old = await signUp(project)
  const rotated = await rotate(project)
  t.equal(rotated.status, 200)
  t.equal(rotated.json.keys.length, 2)
  const [current, next] = rotated.json.keys
  t.match(current, { kid: first, state: 'in_use' })
  t.match(next, { alg: 'ES256', state: 'standby', retires_at: null })
  t.equal(current!.retires_at, next!.signs_from, 'the old key retires when the new one starts signing')
  const lead = (Date.parse(next!.signs_from) - Date.parse(next!.created_at)) / 1000
  t.ok(Math.abs(lead - STANDBY_SECONDS) < 2, `the new key signs ${STANDBY_SECONDS} s after it is published (${lead})`)
  t.same((await jwksOf(project)).json.keys.map((k) => k.kid), [first, next!.kid], 'both are published at once')
  t.equal(decodeProtectedHeader((await signUp(project)).session.access_token).kid, first, 'the old key still signs')

  const again = await rotate(project)
  t.same({ status: again.status, code: again.json.code }, { status: 400, code: 'invalid_argument' })
  t.match(again.json.message, `Signing key ${next!.kid} already waits to sign`)

  const promoted = await rotate(project, { now: true })
  t.equal(promoted.status, 200)
  t.match(promoted.json.keys, [{ kid: first, state: 'previously_used' }, { kid: next!.kid, state: 'in_use', retires_at: null }])
  const dropsIn = (Date.parse(promoted.json.keys[0]!.drops_at!) - Date.parse(promoted.json.keys[0]!.retires_at!)) / 1000
  t.equal(dropsIn, 3600 + 60, "the old key is dropped once its last token has expired (JWT expiry, plus a minute's skew)")
  t.same((await jwksOf(project)).json.keys.map((k) => k.kid), [first, next!.kid], 'the old key stays published')

  const fresh = await signUp(project)
  t.equal(decodeProtectedHeader(fresh.session.access_token).kid, next!.kid, 'new tokens carry the new kid')
  const freshClaims = await fresh.supabase.auth.getClaims()
  t.equal(freshClaims.error, null, 'getClaims verifies the new key')
  t.notOk(fresh.paths.includes('/auth/v1/user'))
  const oldClaims = await old.supabase.auth.getClaims()
  t.equal(oldClaims.error, null, 'getClaims still verifies the token of the old key')
  t.equal((await old.supabase.auth.getUser()).error, null, 'and the gate still takes it')
  t.equal((await gate(project, old.session.access_token)).status, 200)

  // Time passes: the old key's last token expires (the catalogue's clock moved by hand).
  await controlPlane.catalogue.query(
    `update baseplane.signing_keys set signs_from = now() - interval '3 h', retires_at = now() - interval '2 h', drops_at = now() - interval '1 s' where kid = $1`,
    [first],
  )
  await controlPlane.changed()
  t.same((await jwksOf(project)).json.keys.map((k) => k.kid), [next!.kid], 'a dropped key is no longer published')
  t.same((await listed(project)).keys.map((k) => k.kid), [next!.kid])
  const dropped = await gate(project, old.session.access_token)
  t.same({ status: dropped.status, message: dropped.json.message }, { status: 401, message: `Invalid JWT: signing key ${first} is unknown` })
  await rotate(project)
  const { rows } = await controlPlane.catalogue.query('select kid from baseplane.signing_keys where ref = $1 order by signs_from', [project.ref])
  t.equal(rows.length, 2, 'the next rotation deletes the dropped key')
  t.notOk(rows.some((row) => row.kid === first))
})

t.test('an RS256 project', async (t) => {
  const project = await authProject('RSA', 'RS256')
  const jwk = (await jwksOf(project)).json.keys[0]!
  t.same(Object.keys(jwk).sort(), ['alg', 'e', 'key_ops', 'kid', 'kty', 'n', 'use'])
  t.match(jwk, { kty: 'RSA', alg: 'RS256', e: 'AQAB' })
  t.equal(Buffer.from(jwk.n as string, 'base64url').length, 256, '2048-bit modulus')
  const { supabase, session, paths } = await signUp(project)
  t.same(decodeProtectedHeader(session.access_token), { alg: 'RS256', kid: jwk.kid, typ: 'JWT' })
  const claims = await supabase.auth.getClaims()
  t.equal(claims.error, null)
  t.equal(claims.data?.claims.sub, session.user.id)
  t.notOk(paths.includes('/auth/v1/user'), 'verified locally')
  t.equal((await supabase.auth.getUser()).error, null)
  const toEc = await rotate(project, { alg: 'ES256', now: true })
  t.match(toEc.json.keys, [{ alg: 'RS256', state: 'previously_used' }, { alg: 'ES256', state: 'in_use' }], 'rotation may change the algorithm')
  t.equal((await supabase.auth.getUser()).error, null, 'the RS256 token still passes')
})

t.test('a project made before signing keys: HS256 until its operator rotates a key in, published before it signs', async (t) => {
  const project = await authProject('Old')
  await controlPlane.catalogue.query('delete from baseplane.signing_keys where ref = $1', [project.ref])
  await controlPlane.changed()
  t.same((await jwksOf(project)).json, { keys: [] }, 'no key: an empty JWKS, as GoTrue with HS256 only')
  const legacy = await signUp(project)
  t.same(decodeProtectedHeader(legacy.session.access_token), { alg: 'HS256', typ: 'JWT' })
  const claims = await legacy.supabase.auth.getClaims()
  t.equal(claims.error, null, 'getClaims falls back to GET /user for HS256')
  t.ok(legacy.paths.includes('/auth/v1/user'))

  await dropExpiredSigningKeys(controlPlane.catalogue)
  await controlPlane.changed()
  t.same((await listed(project)).keys, [], 'a start gives it no key unasked: its backends may verify with the secret')
  t.equal(decodeProtectedHeader((await signUp(project)).session.access_token).alg, 'HS256')

  const rotated = await rotate(project, {})
  t.match(rotated.json.keys, [{ alg: 'ES256', state: 'standby' }], 'the first rotation publishes a key that waits')
  const view = await listed(project)
  t.same((await jwksOf(project)).json.keys.map((k) => k.kid), [view.keys[0]!.kid], 'published at once')
  t.equal(decodeProtectedHeader((await signUp(project)).session.access_token).alg, 'HS256', 'not signing for its first 10 minutes')
  t.equal((await legacy.supabase.auth.getUser()).error, null, 'the HS256 token keeps working')
  const promoted = await rotate(project, { now: true })
  t.match(promoted.json.keys, [{ state: 'in_use' }])
  t.equal(decodeProtectedHeader((await signUp(project)).session.access_token).alg, 'ES256')
  t.equal((await legacy.supabase.auth.getUser()).error, null, 'and still after the key signs')
})

t.test('which key signs follows the clock', async (t) => {
  const base = { ...newSigningKey('ES256'), createdAt: 0 }
  const t0 = 1_000_000
  const old: SigningKey = { ...base, kid: 'old', signsFrom: t0, retiresAt: t0 + 600_000, dropsAt: t0 + 600_000 + 3_660_000 }
  const next: SigningKey = { ...base, kid: 'next', signsFrom: t0 + 600_000, retiresAt: undefined, dropsAt: undefined }
  t.same([signingKeyState(old, t0 + 1), signingKeyState(next, t0 + 1)], ['in_use', 'standby'])
  t.equal(signerOf([old, next], t0 + 599_999)?.kid, 'old')
  t.equal(signerOf([old, next], t0 + 600_000)?.kid, 'next', 'the standby key takes over on time, with no write')
  t.same([signingKeyState(old, t0 + 600_000), signingKeyState(old, t0 + 600_000 + 3_660_000)], ['previously_used', 'dropped'])
  t.equal(signerOf([], t0), undefined, 'no key: the caller signs HS256')
})

t.test('the admin API refuses bad rotations and algorithms', async (t) => {
  const cases: Array<[string, object, number, string, string]> = [
    ['HS256', { alg: 'HS256' }, 400, 'invalid_argument', 'Unknown signing algorithm "HS256": use ES256 or RS256'],
    ['alg not a string', { alg: 256 }, 400, 'invalid_argument', '"alg" must be a string'],
    ['now not a boolean', { now: 'yes' }, 400, 'invalid_argument', '"now" must be a boolean'],
    ['an unknown field', { kid: 'x' }, 400, 'invalid_argument', 'Unknown field "kid": a rotation takes alg (ES256 or RS256) and now (true or false)'],
  ]
  for (const [name, body, status, code, message] of cases) {
    const reply = await rotate(a, body)
    t.same({ status: reply.status, code: reply.json.code, message: reply.json.message }, { status, code, message }, name)
  }
  const unknown = await request<ErrorBody>(`${admin}/projects/nosuchproject/signing-keys`, { headers: adminAuth })
  t.same({ status: unknown.status, code: unknown.json.code }, { status: 404, code: 'project_not_found' })
  const noToken = await request<ErrorBody>(`${admin}/projects/${a.ref}/signing-keys`)
  t.equal(noToken.status, 401)
  const created = await request<ErrorBody>(`${admin}/projects`, { headers: adminAuth, body: { name: 'x', signing_alg: 'EdDSA' } })
  t.same({ status: created.status, message: created.json.message }, { status: 400, message: 'Unknown signing algorithm "EdDSA": use ES256 or RS256' })
  t.same((await listed(a)).keys.length, 1, 'nothing changed')
})

t.test('the CLI lists and rotates signing keys', async (t) => {
  const project = await authProject('Cli')
  const baseplane = (...args: string[]) => runCli(args, { DATABASE_URL: platform.catalogueUrl, PORT: String(new URL(platform.origin).port) })
  const listedKeys = await baseplane('keys', project.ref, '--signing-keys', '--json')
  t.equal(listedKeys.code, 0, listedKeys.stderr)
  t.match(JSON.parse(listedKeys.stdout), { ref: project.ref, keys: [{ kid: project.record.signingKeys[0]!.kid, alg: 'ES256', state: 'in_use' }] })
  const rotated = await baseplane('keys', project.ref, '--rotate-signing-key', '--alg', 'RS256', '--now')
  t.equal(rotated.code, 0, rotated.stderr)
  t.match(rotated.stdout, new RegExp(`^kid\\s+alg\\s+state\\s+signs from\\s+retires\\s+dropped\\n${project.record.signingKeys[0]!.kid}\\s+ES256\\s+previously_used\\s+\\S+\\s+\\S+\\s+\\S+\\n[0-9a-f-]{36}\\s+RS256\\s+in_use\\s+\\S+\\s+-\\s+-\\n$`))
  t.equal(decodeProtectedHeader((await signUp(project)).session.access_token).alg, 'RS256', 'Auth signs with it on the next request')
  const cases: Array<[string[], number, string]> = [
    [['--now'], 2, 'baseplane: --now goes with --rotate-signing-key\n'],
    [['--rotate', '--rotate-signing-key'], 2, 'baseplane: --rotate and --rotate-signing-key exclude each other\n'],
    [['--rotate-signing-key', '--alg', 'HS256'], 1, 'baseplane: Unknown signing algorithm "HS256": use ES256 or RS256\n'],
  ]
  for (const [args, code, stderr] of cases) {
    const run = await baseplane('keys', project.ref, ...args)
    t.same({ code: run.code, stderr: run.stderr }, { code, stderr }, args.join(' '))
  }
})
