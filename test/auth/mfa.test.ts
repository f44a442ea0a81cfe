// TOTP second factors (issue 6): enrol, challenge and verify with supabase-js
// and with raw calls, aal1 after a password sign-in, aal2 after a code, an
// RLS policy on the aal claim (transaction helper and GraphQL over HTTP), a
// code accepted once (also under concurrency), every refusal with its status
// and code, unenrolment, and the throttle.
import pg from 'pg'
import t from 'tap'
import { generateSync } from 'otplib'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { withRequestTransaction } from '../../lib/db/request-transaction.ts'
import { DEFAULT_ROLE_TIMEOUTS } from '../../lib/plans.ts'
import { verifyJwt } from '../../lib/jwt.ts'
import { type AuthBody, authFixture, authPlatform, type AuthFixture, call, projectSql } from './helpers.ts'

const code = (secret: string, offsetSeconds = 0) => generateSync({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSeconds })

async function user(f: AuthFixture, email: string, password = 'password 123') {
  const created = await f.admin().auth.admin.createUser({ email, password, email_confirm: true })
  if (created.error) throw created.error
  const signIn = await call(f, 'POST', '/token?grant_type=password', { email, password })
  return { id: created.data.user!.id, token: signIn.body.access_token as string, session: signIn.body }
}

/** Enrols and verifies a TOTP factor with raw calls; the aal2 session and the factor's secret. */
async function withVerifiedFactor(f: AuthFixture, token: string, name = 'phone') {
  const enrolled = await call(f, 'POST', '/factors', { factor_type: 'totp', friendly_name: name }, { token })
  const challenge = await call(f, 'POST', `/factors/${enrolled.body.id}/challenge`, undefined, { token })
  const verified = await call(f, 'POST', `/factors/${enrolled.body.id}/verify`, { challenge_id: challenge.body.id, code: code(enrolled.body.totp.secret) }, { token })
  return { factorId: enrolled.body.id as string, secret: enrolled.body.totp.secret as string, session: verified.body }
}

// One platform for the tests below (the throttle's has its own), each with a project of its own.
const shared = await authPlatform(t)

t.test('supabase-js: enrol, challenge, verify, assurance levels, RLS on aal', async (t) => {
  const f = await shared.fixture()
  const supabase = f.anon()
  await f.admin().auth.admin.createUser({ email: 'ada@example.test', password: 'password 123', email_confirm: true })
  const signIn = await supabase.auth.signInWithPassword({ email: 'ada@example.test', password: 'password 123' })
  t.error(signIn.error)
  t.same((await supabase.auth.mfa.getAuthenticatorAssuranceLevel()).data, {
    currentLevel: 'aal1', nextLevel: 'aal1', currentAuthenticationMethods: [{ method: 'password', timestamp: ((await verifyJwt(f.project.record, signIn.data.session!.access_token)).amr as Array<{ timestamp: number }>)[0]!.timestamp }],
  })

  const enrolled = await supabase.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Ada phone' })
  t.error(enrolled.error)
  const factor = enrolled.data!
  t.equal(factor.type, 'totp')
  t.equal(factor.friendly_name, 'Ada phone')
  t.match(factor.totp.secret, /^[A-Z2-7]{32}$/, 'a 20-byte base32 secret')
  t.equal(factor.totp.uri, `otpauth://totp/test%20project:ada%40example.test?algorithm=SHA1&digits=6&issuer=test%20project&period=30&secret=${factor.totp.secret}`, 'labelled with the project\'s name')
  t.match(factor.totp.qr_code, /^data:image\/svg\+xml;utf-8,<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/, 'raw SVG, which supabase-js turns into a data URL')
  const listed = await supabase.auth.mfa.listFactors()
  t.match(listed.data?.all, [{ id: factor.id, status: 'unverified', factor_type: 'totp', friendly_name: 'Ada phone' }])
  t.same(listed.data?.totp, [], 'only verified factors count as totp factors')

  const challenge = await supabase.auth.mfa.challenge({ factorId: factor.id })
  t.error(challenge.error)
  t.match(challenge.data, { id: /^[0-9a-f-]{36}$/, type: 'totp' })
  const expiresIn = challenge.data!.expires_at - Date.now() / 1000
  t.ok(expiresIn > 290 && expiresIn <= 301, `challenge expires in 300 s (${expiresIn})`)

  const firstCode = code(factor.totp.secret)
  const verified = await supabase.auth.mfa.verify({ factorId: factor.id, challengeId: challenge.data!.id, code: firstCode })
  t.error(verified.error)
  const aal2 = await verifyJwt(f.project.record, verified.data!.access_token)
  t.equal(aal2.aal, 'aal2')
  t.same((aal2.amr as Array<{ method: string }>).map((a) => a.method), ['totp', 'password'], 'totp added to amr, newest first')
  t.equal(aal2.session_id, (await verifyJwt(f.project.record, signIn.data.session!.access_token)).session_id, 'the same session, raised')
  const level = await supabase.auth.mfa.getAuthenticatorAssuranceLevel()
  t.equal(level.data?.currentLevel, 'aal2')
  t.equal(level.data?.nextLevel, 'aal2')
  t.same(level.data?.currentAuthenticationMethods.map((m) => (typeof m === 'string' ? m : m.method)), ['totp', 'password'])
  t.match((await supabase.auth.mfa.listFactors()).data?.totp, [{ id: factor.id, status: 'verified' }])

  // The code is spent: the same six digits on a new challenge are refused; the next step's code works.
  const again = await supabase.auth.mfa.challengeAndVerify({ factorId: factor.id, code: firstCode })
  t.equal(again.error?.status, 422)
  t.equal(again.error?.code, 'mfa_verification_rejected')
  const next = await supabase.auth.mfa.challengeAndVerify({ factorId: factor.id, code: code(factor.totp.secret, 30) })
  t.error(next.error, "the next step's code works")

  // A refresh keeps aal2; a new password sign-in is aal1 until a factor is verified.
  const refreshed = await supabase.auth.refreshSession()
  t.equal((await verifyJwt(f.project.record, refreshed.data.session!.access_token)).aal, 'aal2')
  const other = f.anon()
  const second = await other.auth.signInWithPassword({ email: 'ada@example.test', password: 'password 123' })
  t.error(second.error)
  const aal1 = await verifyJwt(f.project.record, second.data.session!.access_token)
  t.equal(aal1.aal, 'aal1')
  t.same((await other.auth.mfa.getAuthenticatorAssuranceLevel()).data?.nextLevel, 'aal2', 'the client knows a second factor is due')
  const me = await call(f, 'GET', '/user', undefined, { token: second.data.session!.access_token })
  t.match(me.body.factors, [{ id: factor.id, status: 'verified', factor_type: 'totp', friendly_name: 'Ada phone', phone: '' }], 'GET /user lists factors')
  t.notOk('secret' in me.body.factors[0], 'never the secret')
  const change = await other.auth.updateUser({ password: 'another password' })
  t.equal(change.error?.status, 401)
  t.equal(change.error?.code, 'insufficient_aal')

  // A policy on the aal claim: only the aal2 session reads the rows.
  const owner = new pg.Client({ connectionString: ownerUrlOf(f.project.record) })
  await owner.connect()
  t.teardown(() => owner.end())
  await owner.query(`create table public.vault (id serial primary key, secret text not null);
    alter table public.vault enable row level security;
    create policy second_factor on public.vault for select to authenticated using (auth.jwt() ->> 'aal' = 'aal2');
    grant select on public.vault to authenticated;
    insert into public.vault (secret) values ('launch codes');`)
  const api = new pg.Pool({ host: f.project.record.dbHost, port: f.project.record.dbPort, database: f.project.record.dbName, user: f.project.record.dbApiRole, password: f.project.record.dbApiPassword })
  t.teardown(() => api.end())
  const read = (claims: Record<string, unknown>) => withRequestTransaction(api, { role: 'authenticated', claims }, DEFAULT_ROLE_TIMEOUTS, async (c) => (await c.query('select secret from public.vault')).rows)
  t.same(await read(aal1), [], 'aal1 sees nothing')
  t.same(await read(aal2), [{ secret: 'launch codes' }], 'aal2 reads the row')

  const graphql = async (token: string) => {
    const response = await fetch(`${f.project.baseUrl}/graphql/v1`, {
      method: 'POST',
      headers: { apikey: f.project.anonKey, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ vaultCollection { edges { node { secret } } } }' }),
    })
    return { status: response.status, body: await response.json() }
  }
  t.same(await graphql(second.data.session!.access_token), { status: 200, body: { data: { vaultCollection: { edges: [] } } } }, 'GraphQL: aal1 sees nothing')
  t.same(await graphql(refreshed.data.session!.access_token), { status: 200, body: { data: { vaultCollection: { edges: [{ node: { secret: 'launch codes' } }] } } } }, 'GraphQL: aal2 reads the row')
})

t.test('raw calls with apikey and Authorization; a code accepted once under concurrency', async (t) => {
  const f = await shared.fixture()
  const bob = await user(f, 'bob@example.test')
  t.equal((await verifyJwt(f.project.record, bob.token)).aal, 'aal1')
  const enrolled = await call(f, 'POST', '/factors', { factor_type: 'totp', issuer: 'Example App' }, { token: bob.token, version: false })
  t.equal(enrolled.status, 200)
  t.same(Object.keys(enrolled.body).sort(), ['friendly_name', 'id', 'totp', 'type'])
  t.equal(enrolled.body.friendly_name, '')
  t.match(enrolled.body.totp.uri, /^otpauth:\/\/totp\/Example%20App:bob%40example\.test\?algorithm=SHA1&digits=6&issuer=Example%20App&period=30&secret=/)
  t.match(enrolled.body.totp.qr_code, /^<svg/)
  const secret = enrolled.body.totp.secret
  const factorId = enrolled.body.id
  const [c1, c2] = await Promise.all([1, 2].map(() => call(f, 'POST', `/factors/${factorId}/challenge`, {}, { token: bob.token })))
  const sameCode = code(secret)
  const results = await Promise.all([c1!, c2!].map((c) => call(f, 'POST', `/factors/${factorId}/verify`, { challenge_id: c.body.id, code: sameCode }, { token: bob.token })))
  const statuses = results.map((r) => r.status).sort()
  t.same(statuses, [200, 422], 'exactly one of two concurrent verifications with one code passes')
  const loser = results.find((r) => r.status === 422)!
  t.same(loser.body, { code: 'mfa_verification_rejected', message: 'This TOTP code was already accepted; wait for the next code' })
  t.equal(loser.headers.get('x-sb-error-code'), 'mfa_verification_rejected')
  const winner = results.find((r) => r.status === 200)!
  t.match(winner.body, { token_type: 'bearer', expires_in: 3600, refresh_token: /^[a-z0-9]{24}$/, user: { id: bob.id, factors: [{ id: factorId, status: 'verified' }] } })
  t.equal((await verifyJwt(f.project.record, winner.body.access_token)).aal, 'aal2')
  const { rows } = await projectSql(f, 'select last_timestep::int as step from auth.mfa_factors where id = $1', [factorId])
  t.ok(Math.abs(rows[0]!.step - Math.floor(Date.now() / 30000)) <= 1, 'the accepted time step is kept per factor')
  // The aal1 refresh token was swapped: it cannot produce an aal2 session.
  const oldRefresh = await call(f, 'POST', '/token?grant_type=refresh_token', { refresh_token: bob.session.refresh_token })
  t.equal(oldRefresh.status, 400)
  t.equal(oldRefresh.body.code, 'refresh_token_already_used')
})

t.test('refusals, each with its status and code', async (t) => {
  const f = await shared.fixture()
  const carol = await user(f, 'carol@example.test')
  const dave = await user(f, 'dave@example.test')
  const expect = async (label: string, reply: Promise<{ status: number; body: AuthBody | undefined }>, status: number, codeName: string, message?: string) => {
    const r = await reply
    t.equal(r.status, status, `${label}: status`)
    t.equal(r.body?.code, codeName, `${label}: code`)
    if (message !== undefined) t.equal(r.body?.message, message, `${label}: message`)
  }

  await expect('no token', call(f, 'POST', '/factors', { factor_type: 'totp' }), 401, 'no_authorization', 'This endpoint requires a valid Bearer token')
  await expect('the anon key as bearer', call(f, 'POST', '/factors', { factor_type: 'totp' }, { token: f.project.anonKey }), 403, 'bad_jwt', 'invalid claim: missing sub claim')
  await expect('unknown factor type', call(f, 'POST', '/factors', { factor_type: 'sms' }, { token: carol.token }), 400, 'validation_failed', 'factor_type needs to be totp, phone, or webauthn')
  await expect('phone factors', call(f, 'POST', '/factors', { factor_type: 'phone', phone: '+15555550100' }, { token: carol.token }), 422, 'mfa_phone_enroll_not_enabled', 'MFA enroll is disabled for Phone')
  await expect('webauthn factors', call(f, 'POST', '/factors', { factor_type: 'webauthn' }, { token: carol.token }), 422, 'mfa_webauthn_enroll_not_enabled', 'MFA enroll is disabled for WebAuthn')
  await expect('bad JSON', call(f, 'POST', '/factors', '{nope', { token: carol.token }), 400, 'bad_json')

  const first = await call(f, 'POST', '/factors', { factor_type: 'totp', friendly_name: 'laptop' }, { token: carol.token })
  t.equal(first.status, 200)
  await expect('name conflict', call(f, 'POST', '/factors', { factor_type: 'totp', friendly_name: 'laptop' }, { token: carol.token }), 422, 'mfa_factor_name_conflict', 'A factor with the friendly name "laptop" for this user already exists')
  const factorId = first.body.id
  const secret = first.body.totp.secret

  await expect('factor id not a UUID', call(f, 'POST', '/factors/nope/challenge', {}, { token: carol.token }), 404, 'validation_failed', 'factor_id must be an UUID')
  await expect('unknown factor', call(f, 'POST', '/factors/00000000-0000-4000-8000-000000000000/challenge', {}, { token: carol.token }), 404, 'mfa_factor_not_found', 'Factor not found')
  await expect("another user's factor: challenge", call(f, 'POST', `/factors/${factorId}/challenge`, {}, { token: dave.token }), 404, 'mfa_factor_not_found', 'Factor not found')
  await expect("another user's factor: verify", call(f, 'POST', `/factors/${factorId}/verify`, { challenge_id: '00000000-0000-4000-8000-000000000000', code: '123456' }, { token: dave.token }), 404, 'mfa_factor_not_found', 'Factor not found')
  await expect("another user's factor: delete", call(f, 'DELETE', `/factors/${factorId}`, undefined, { token: dave.token }), 404, 'mfa_factor_not_found', 'Factor not found')

  const challenge = (await call(f, 'POST', `/factors/${factorId}/challenge`, {}, { token: carol.token })).body.id
  const verify = (body: unknown, token = carol.token, id = factorId) => call(f, 'POST', `/factors/${id}/verify`, body, { token })
  await expect('empty code', verify({ challenge_id: challenge, code: '' }), 400, 'validation_failed', 'Code needs to be non-empty')
  await expect('challenge id not a UUID', verify({ challenge_id: 'abc', code: '123456' }), 400, 'bad_json')
  await expect('unknown challenge', verify({ challenge_id: '00000000-0000-4000-8000-000000000000', code: code(secret) }), 422, 'mfa_factor_not_found', 'MFA factor with the provided challenge ID not found')
  const wrong = code(secret) === '000000' ? '111111' : '000000'
  await expect('wrong code', verify({ challenge_id: challenge, code: wrong }), 422, 'mfa_verification_failed', 'Invalid TOTP code entered')
  await expect('not six digits', verify({ challenge_id: challenge, code: 'abcdef' }), 422, 'mfa_verification_failed')
  await expect('an old code (two steps back)', verify({ challenge_id: challenge, code: code(secret, -90) }), 422, 'mfa_verification_failed')

  // A challenge of another factor of one's own is foreign to this factor.
  const davesFactor = await call(f, 'POST', '/factors', { factor_type: 'totp' }, { token: dave.token })
  const davesChallenge = (await call(f, 'POST', `/factors/${davesFactor.body.id}/challenge`, {}, { token: dave.token })).body.id
  await expect("another factor's challenge", verify({ challenge_id: davesChallenge, code: code(secret) }), 422, 'mfa_factor_not_found', 'MFA factor with the provided challenge ID not found')

  // Expired: older than 300 s. The expired challenge is removed.
  const old = (await call(f, 'POST', `/factors/${factorId}/challenge`, {}, { token: carol.token })).body.id
  await projectSql(f, `update auth.mfa_challenges set created_at = now() - interval '301 seconds' where id = $1`, [old])
  await expect('expired challenge', verify({ challenge_id: old, code: code(secret) }), 422, 'mfa_challenge_expired', `MFA challenge ${old} has expired, verify against another challenge or create a new challenge.`)
  await expect('expired challenge, again', verify({ challenge_id: old, code: code(secret) }), 422, 'mfa_factor_not_found')

  // A challenge is used once; a challenge from another address is refused.
  const ok = await verify({ challenge_id: challenge, code: code(secret) })
  t.equal(ok.status, 200, 'the right code passes')
  const aal2 = ok.body.access_token as string
  await expect('a used challenge', verify({ challenge_id: challenge, code: code(secret, 30) }, aal2), 422, 'mfa_ip_address_mismatch', 'Challenge and verify IP addresses mismatch.')
  const elsewhere = (await call(f, 'POST', `/factors/${factorId}/challenge`, {}, { token: aal2 })).body.id
  await projectSql(f, `update auth.mfa_challenges set ip_address = '203.0.113.9' where id = $1`, [elsewhere])
  await expect('a challenge from another address', verify({ challenge_id: elsewhere, code: code(secret, 30) }, aal2), 422, 'mfa_ip_address_mismatch')

  // Assurance-level rules once a factor is verified.
  const aal1 = (await call(f, 'POST', '/token?grant_type=password', { email: 'carol@example.test', password: 'password 123' })).body.access_token
  t.equal((await verifyJwt(f.project.record, aal1)).aal, 'aal1', 'password sign-in: aal1')
  await expect('enrol another factor at aal1', call(f, 'POST', '/factors', { factor_type: 'totp', friendly_name: 'tablet' }, { token: aal1 }), 403, 'insufficient_aal', 'AAL2 required to enroll a new factor')
  await expect('unenrol a verified factor at aal1', call(f, 'DELETE', `/factors/${factorId}`, undefined, { token: aal1 }), 422, 'insufficient_aal', 'AAL2 required to unenroll verified factor')
  t.equal((await call(f, 'POST', '/factors', { factor_type: 'totp', friendly_name: 'tablet' }, { token: aal2 })).status, 200, 'aal2 may enrol another')
})

t.test('unenrolment drops sessions to aal1', async (t) => {
  const f = await shared.fixture()
  const erin = await user(f, 'erin@example.test')
  const { factorId, session } = await withVerifiedFactor(f, erin.token)
  t.equal((await verifyJwt(f.project.record, session.access_token)).aal, 'aal2')
  const removed = await call(f, 'DELETE', `/factors/${factorId}`, undefined, { token: session.access_token })
  t.same({ status: removed.status, body: removed.body }, { status: 200, body: { id: factorId } })
  const me = await call(f, 'GET', '/user', undefined, { token: session.access_token })
  t.notOk('factors' in me.body, 'no factors left (the field is absent, as in GoTrue)')
  const refreshed = await call(f, 'POST', '/token?grant_type=refresh_token', { refresh_token: session.refresh_token })
  const claims = await verifyJwt(f.project.record, refreshed.body.access_token)
  t.equal(claims.aal, 'aal1', 'the session is aal1 again')
  t.same((claims.amr as Array<{ method: string }>).map((a) => a.method), ['password'])
  const unverified = await call(f, 'POST', '/factors', { factor_type: 'totp' }, { token: refreshed.body.access_token })
  t.equal((await call(f, 'DELETE', `/factors/${unverified.body.id}`, undefined, { token: refreshed.body.access_token })).status, 200, 'an unverified factor goes at aal1')
})

t.test('failed factor verifications feed the throttle', async (t) => {
  const f = await authFixture(t, { BASEPLANE_THROTTLE_MAX_FAILURES: '3' })
  const frank = await user(f, 'frank@example.test')
  const enrolled = await call(f, 'POST', '/factors', { factor_type: 'totp' }, { token: frank.token })
  const challenge = (await call(f, 'POST', `/factors/${enrolled.body.id}/challenge`, {}, { token: frank.token })).body.id
  const wrong = code(enrolled.body.totp.secret) === '000000' ? '111111' : '000000'
  for (let i = 0; i < 3; i++) {
    t.equal((await call(f, 'POST', `/factors/${enrolled.body.id}/verify`, { challenge_id: challenge, code: wrong }, { token: frank.token })).status, 422)
  }
  const refused = await call(f, 'POST', `/factors/${enrolled.body.id}/verify`, { challenge_id: challenge, code: code(enrolled.body.totp.secret) }, { token: frank.token })
  t.equal(refused.status, 429)
  t.equal(refused.body.code, 'over_request_rate_limit')
})
