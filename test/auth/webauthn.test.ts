// WebAuthn second factors (issue 25 item 3), as GoTrue >= 2.190 serves them:
// the settings (off by default; relying party from the project, never from
// the request) through the admin API and the CLI; every refusal without a
// browser; then, in headless Chromium with a DevTools-protocol virtual
// authenticator on an http://localhost page, enrolment (challenge "create",
// verify, aal2), a second sign-in (challenge "request", verify, aal2), replays
// refused, the switches, and unenrolment, with the unmodified supabase-js.
import fs from 'node:fs'
import http from 'node:http'
import t from 'tap'
import { chromium, type Page } from 'playwright-core'
import { setAuthOptions } from '../../control-plane/auth-settings.ts'
import { freePort } from '../../lib/db/embedded.ts'
import { verifyJwt } from '../../lib/jwt.ts'
import { runCli } from '../helpers/cli.ts'
import { adminQuery, serverUrl, withDatabase } from '../helpers/db.ts'
import { type AuthBody, authFixture, type AuthFixture, authSettingsApi, call } from './helpers.ts'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the options as the server wrote them
type Challenge = AuthBody & { webauthn: { type: string; credential_options: { publicKey: any } } }

const PASSWORD = 'password 123'
const ON = { mfa_web_authn_enroll_enabled: true, mfa_web_authn_verify_enabled: true }

async function signIn(f: AuthFixture, email: string) {
  const supabase = f.anon()
  const { error } = await supabase.auth.signInWithPassword({ email, password: PASSWORD })
  if (error) throw error
  const { data } = await supabase.auth.getSession()
  return { supabase, token: data.session!.access_token }
}

async function newUser(f: AuthFixture, email: string) {
  const created = await f.admin().auth.admin.createUser({ email, password: PASSWORD, email_confirm: true })
  if (created.error) throw created.error
  return { id: created.data.user!.id, ...(await signIn(f, email)) }
}

const methods = (claims: Record<string, unknown>) => (claims.amr as Array<{ method: string }>).map((a) => a.method)

t.test('settings, and every refusal without a browser', async (t) => {
  const f = await authFixture(t)
  const cp = f.test.platform.controlPlane
  const ref = f.project.ref
  const ada = await newUser(f, 'ada@example.test')
  const token = ada.token

  await t.test('the settings: defaults from the site URL, validation, admin API and CLI', async (t) => {
    const api = authSettingsApi(f)
    t.match((await api('GET')).body, {
      mfa_web_authn_enroll_enabled: false,
      mfa_web_authn_verify_enabled: false,
      webauthn_rp_id: 'app.example.test',
      webauthn_rp_display_name: 'app.example.test',
      webauthn_rp_origins: ['https://app.example.test'],
    }, 'off, with the relying party of the site URL')
    t.match(await api('PATCH', { webauthn_rp_id: 'https://app.example.test' }), { status: 400, body: { code: 'invalid_argument', message: /webauthn_rp_id must be a lower-case domain name without scheme or port/ } })
    t.match(await api('PATCH', { webauthn_rp_origins: ['http://app.example.test'] }), { status: 400, body: { message: /it must be https \(http only on localhost\)/ } })
    t.match(await api('PATCH', { webauthn_rp_origins: ['https://app.example.test/'] }), { status: 400, body: { message: /with no path or trailing slash, such as https:\/\/app.example.test/ } })
    t.match(await api('PATCH', { webauthn_rp_id: 'example.test', webauthn_rp_origins: ['https://elsewhere.test'] }), { status: 400, body: { message: /https:\/\/elsewhere.test is not on example.test/ } })
    t.match(await api('PATCH', { mfa_web_authn_verify_enabled: 'yes' }), { status: 400, body: { message: /mfa_web_authn_verify_enabled must be true or false/ } })
    t.match(await api('PATCH', { webauthn_rp_id: 'example.test', webauthn_rp_origins: ['https://app.example.test', 'https://example.test'], webauthn_rp_display_name: 'Example' }), {
      status: 200,
      body: { webauthn_rp_id: 'example.test', webauthn_rp_origins: ['https://app.example.test', 'https://example.test'], webauthn_rp_display_name: 'Example' },
    })

    const env = { DATABASE_URL: f.test.catalogueUrl }
    let r = await runCli(['auth', 'settings', ref], env)
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'webauthn factors      enrol off, verify off; relying party example.test ("Example"), origins https://app.example.test, https://example.test')
    r = await runCli(['auth', 'settings', ref, '--webauthn-enroll', 'true', '--webauthn-rp-id', 'default', '--webauthn-rp-name', 'default', '--webauthn-rp-origins', 'default'], env)
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'webauthn factors      enrol on, verify off; relying party app.example.test ("app.example.test"), origins https://app.example.test', '"default" goes back to the defaults')
    r = await runCli(['auth', 'settings', ref, '--webauthn-rp-origins', 'ftp://x.test'], env)
    t.equal(r.code, 1)
    t.match(r.stderr, '--webauthn-rp-origins: "ftp://x.test" is not an origin browsers use for WebAuthn: it must be https (http only on localhost)')
    r = await runCli(['auth', 'settings', ref, '--webauthn-verify', 'maybe'], env)
    t.equal(r.code, 1)
    t.match(r.stderr, '--webauthn-verify must be true or false, got "maybe"')
  })

  await t.test('enrol with only enrolment on; challenges need verification on', async (t) => {
    await setAuthOptions(cp, ref, { mfa_web_authn_enroll_enabled: false, mfa_web_authn_verify_enabled: false })
    t.match(await call(f, 'POST', '/factors', { factor_type: 'webauthn', friendly_name: 'Key' }, { token }), { status: 422, body: { code: 'mfa_webauthn_enroll_not_enabled', message: 'MFA enroll is disabled for WebAuthn' } })
    await setAuthOptions(cp, ref, { mfa_web_authn_enroll_enabled: true })
    const enrolled = await ada.supabase.auth.mfa.enroll({ factorType: 'webauthn', friendlyName: 'Key' })
    t.error(enrolled.error)
    t.same(Object.keys(enrolled.data!).sort(), ['friendly_name', 'id', 'type'])
    t.match(enrolled.data, { type: 'webauthn', friendly_name: 'Key' })
    t.match(await call(f, 'POST', '/factors', { factor_type: 'webauthn', friendly_name: 'Key' }, { token }), { status: 422, body: { code: 'mfa_factor_name_conflict' } })
    const listed = await ada.supabase.auth.mfa.listFactors()
    t.match(listed.data?.all, [{ id: enrolled.data!.id, factor_type: 'webauthn', status: 'unverified', friendly_name: 'Key' }], 'GET /user lists it')
    t.same(listed.data?.webauthn, [], 'listed under webauthn once verified')
    t.match(await call(f, 'POST', `/factors/${enrolled.data!.id}/challenge`, { webauthn: { rpId: 'localhost', rpOrigins: ['http://localhost'] } }, { token }), {
      status: 422,
      body: { code: 'mfa_webauthn_verify_not_enabled', message: 'MFA verification is disabled for WebAuthn' },
    })
    t.match(await call(f, 'POST', `/factors/${enrolled.data!.id}/verify`, { challenge_id: crypto.randomUUID(), webauthn: { type: 'create', credential_response: {} } }, { token }), { status: 422, body: { code: 'mfa_webauthn_verify_not_enabled' } })
    t.match(await ada.supabase.auth.mfa.unenroll({ factorId: enrolled.data!.id }), { data: { id: enrolled.data!.id }, error: null }, 'an unverified factor goes at aal1')
  })

  await t.test('challenge options from the settings; verify refusals in order', async (t) => {
    await setAuthOptions(cp, ref, ON)
    const { data: factor } = await ada.supabase.auth.mfa.enroll({ factorType: 'webauthn', friendlyName: 'Key 2' })
    const id = factor!.id
    // auth-js sends its own rpId/rpOrigins; GoTrue >= 2.190 (and we) ignore them.
    const challenge = await call<Challenge>(f, 'POST', `/factors/${id}/challenge`, { factorId: id, webauthn: { rpId: 'evil.test', rpOrigins: ['https://evil.test'] } }, { token })
    t.equal(challenge.status, 200)
    t.same(Object.keys(challenge.body).sort(), ['expires_at', 'id', 'type', 'webauthn'])
    t.match(challenge.body, {
      type: 'webauthn',
      webauthn: {
        type: 'create',
        credential_options: {
          publicKey: {
            rp: { id: 'app.example.test', name: 'app.example.test' },
            user: { id: Buffer.from(ada.id.replace(/-/g, ''), 'hex').toString('base64url'), name: 'ada@example.test', displayName: 'ada@example.test' },
            challenge: /^[A-Za-z0-9_-]{43}$/,
            pubKeyCredParams: [{ alg: -8, type: 'public-key' }, { alg: -7, type: 'public-key' }, { alg: -257, type: 'public-key' }],
            excludeCredentials: [],
            attestation: 'none',
            timeout: 300000,
          },
        },
      },
    })
    const expiresIn = challenge.body.expires_at - Date.now() / 1000
    t.ok(expiresIn > 290 && expiresIn <= 301, `expires in 300 s (${expiresIn})`)
    const viaClient = await ada.supabase.auth.mfa.challenge({ factorId: id, webauthn: { rpId: 'evil.test', rpOrigins: ['https://evil.test'] } })
    t.error(viaClient.error)
    t.equal((viaClient.data as { webauthn: { credential_options: { publicKey: { rp: { id: string } } } } }).webauthn.credential_options.publicKey.rp.id, 'app.example.test', 'supabase-js reads the options')

    const verify = (body: unknown, factorId = id) => call(f, 'POST', `/factors/${factorId}/verify`, body, { token })
    const challengeId = challenge.body.id
    const wellFormed = { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'e30', attestationObject: 'oA' } }
    t.match(await verify({ challenge_id: challengeId }), { status: 400, body: { code: 'validation_failed', message: 'WebAuthn config required' } })
    t.match(await verify({ challenge_id: challengeId, webauthn: { type: 'sign' } }), { status: 400, body: { message: 'WebAuthn type must be create or request' } })
    t.match(await verify({ challenge_id: challengeId, webauthn: { type: 'create' } }), { status: 400, body: { message: 'credential_response required' } })
    t.match(await verify({ challenge_id: challengeId, webauthn: { type: 'create', credential_response: { id: 'x' } } }), { status: 400, body: { message: 'Invalid credential_response' } })
    t.match(await verify({ challenge_id: challengeId, webauthn: { type: 'create', credential_response: 'nope' } }), { status: 400, body: { message: 'Invalid credential_response' } })
    t.match(await verify({ challenge_id: 'not-a-uuid', webauthn: { type: 'create', credential_response: wellFormed } }), { status: 400, body: { code: 'bad_json' } })
    t.match(await verify({ challenge_id: crypto.randomUUID(), webauthn: { type: 'create', credential_response: wellFormed } }), { status: 422, body: { code: 'mfa_factor_not_found', message: 'MFA factor with the provided challenge ID not found' } })
    t.match(await verify({ challenge_id: challengeId, webauthn: { type: 'create', credential_response: wellFormed } }, crypto.randomUUID()), { status: 404, body: { code: 'mfa_factor_not_found' } })
    t.match(await verify({ challenge_id: challengeId, webauthn: { type: 'request', credential_response: { ...wellFormed, response: { clientDataJSON: 'e30', authenticatorData: 'AA', signature: 'AA' } } } }), {
      status: 400,
      body: { code: 'validation_failed', message: 'WebAuthn type must be create for this challenge (the factor is unverified)' },
    })
    t.match(await verify({ challenge_id: challengeId, webauthn: { type: 'create', credential_response: wellFormed } }), {
      status: 422,
      body: { code: 'mfa_verification_failed', message: /^Failed to validate WebAuthn MFA response: / },
    }, 'a well-formed answer that does not verify')
    const clientData = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge: challenge.body.webauthn.credential_options.publicKey.challenge, origin: 'https://evil.test' })).toString('base64url')
    t.match(await verify({ challenge_id: challengeId, webauthn: { type: 'create', credential_response: { ...wellFormed, response: { clientDataJSON: clientData, attestationObject: 'oA' } } } }), {
      status: 422,
      body: { code: 'mfa_verification_failed', message: /origin "https:\/\/evil.test"/ },
    }, 'an origin the settings do not list')

    const db = withDatabase(await serverUrl(), f.project.record.dbName)
    await adminQuery(db, `update auth.mfa_challenges set created_at = now() - interval '301 seconds' where id = $1`, [challengeId])
    t.match(await verify({ challenge_id: challengeId, webauthn: { type: 'create', credential_response: wellFormed } }), { status: 422, body: { code: 'mfa_challenge_expired' } })
    t.same((await adminQuery(db, 'select count(*)::int as n from auth.mfa_challenges where id = $1', [challengeId])).rows, [{ n: 0 }], 'the expired challenge is gone')

    const other = await newUser(f, 'bob@example.test')
    t.match(await call<Challenge>(f, 'POST', `/factors/${id}/challenge`, {}, { token: other.token }), { status: 404, body: { code: 'mfa_factor_not_found' } }, "another user's factor")
  })
})

const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
t.test('in headless Chromium with a virtual authenticator', { skip: fs.existsSync(executablePath) ? false : `no Chromium at ${executablePath} (install chromium or set CHROMIUM_PATH)` }, async (t) => {
  // The app's page: http://localhost is a secure context, so WebAuthn runs on it.
  const port = await freePort()
  const app = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title><p>app</p>'))
  await new Promise<void>((resolve) => app.listen(port, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => app.close(() => resolve())))
  const origin = `http://localhost:${port}`
  const f = await authFixture(t, {}, { ...ON, webauthn_rp_id: 'localhost', webauthn_rp_origins: [origin], webauthn_rp_display_name: 'Test app' })
  const cp = f.test.platform.controlPlane

  const browser = await chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'] })
  t.teardown(() => browser.close())
  const context = await browser.newContext()
  const page: Page = await context.newPage()
  await page.goto(`${origin}/`)
  const cdp = await context.newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
  })

  /**
   * navigator.credentials.create/get with the server's options (base64url JSON), answered as
   * PublicKeyCredential.toJSON() would. Plain page script (a string), so the test's compiler adds nothing to it.
   */
  const ceremony = (type: 'create' | 'request', publicKey: unknown): Promise<Record<string, unknown>> =>
    page.evaluate(`(${CEREMONY_SCRIPT})(${JSON.stringify(type)}, ${JSON.stringify(publicKey)})`)
  // What auth-js's serialize*Response calls: the browser credential's toJSON().
  const asBrowserCredential = (json: unknown) => ({ toJSON: () => json }) as never
  const rpFromBrowser = { rpId: 'localhost', rpOrigins: [origin] }

  const ada = await newUser(f, 'ada@example.test')
  let factorId = ''
  let assertion: { challengeId: string; body: unknown } | undefined

  await t.test('enrol: challenge "create", the browser registers, verify gives aal2', async (t) => {
    const enrolled = await ada.supabase.auth.mfa.enroll({ factorType: 'webauthn', friendlyName: 'Laptop' })
    t.error(enrolled.error)
    factorId = enrolled.data!.id
    const challenge = await call<Challenge>(f, 'POST', `/factors/${factorId}/challenge`, { factorId, webauthn: rpFromBrowser }, { token: ada.token })
    t.equal(challenge.status, 200)
    t.match(challenge.body.webauthn, { type: 'create', credential_options: { publicKey: { rp: { id: 'localhost', name: 'Test app' } } } })
    const credential = await ceremony('create', challenge.body.webauthn.credential_options.publicKey)
    const verified = await ada.supabase.auth.mfa.verify({ factorId, challengeId: challenge.body.id, webauthn: { type: 'create', ...rpFromBrowser, credential_response: asBrowserCredential(credential) } } as never)
    t.error(verified.error)
    const claims = await verifyJwt(f.project.record, verified.data!.access_token)
    t.equal(claims.aal, 'aal2')
    t.same(methods(claims), ['mfa/webauthn', 'password'], 'mfa/webauthn added to amr')
    t.match((await ada.supabase.auth.mfa.getAuthenticatorAssuranceLevel()).data, { currentLevel: 'aal2', nextLevel: 'aal2' })
    const listed = await ada.supabase.auth.mfa.listFactors()
    t.match(listed.data?.webauthn, [{ id: factorId, factor_type: 'webauthn', status: 'verified', friendly_name: 'Laptop' }])
    t.notOk('web_authn_credential' in listed.data!.webauthn[0]!, 'the credential is never shown')
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
    t.equal(credentials.length, 1, 'the authenticator holds one credential')
    t.equal(credentials[0]!.rpId, 'localhost')

    t.match(await call(f, 'POST', `/factors/${factorId}/verify`, { challenge_id: challenge.body.id, webauthn: { type: 'create', credential_response: credential } }, { token: ada.token }), {
      status: 422, body: { code: 'mfa_ip_address_mismatch' },
    }, 'the challenge is used once')
  })

  await t.test('a second sign-in: challenge "request", the browser signs, verify gives aal2', async (t) => {
    const second = await signIn(f, 'ada@example.test')
    t.match((await second.supabase.auth.mfa.getAuthenticatorAssuranceLevel()).data, { currentLevel: 'aal1', nextLevel: 'aal2' })
    const challenge = await call<Challenge>(f, 'POST', `/factors/${factorId}/challenge`, { factorId, webauthn: rpFromBrowser }, { token: second.token })
    t.equal(challenge.status, 200)
    const publicKey = challenge.body.webauthn.credential_options.publicKey
    t.match(challenge.body.webauthn, { type: 'request', credential_options: { publicKey: { rpId: 'localhost', userVerification: 'preferred', allowCredentials: [{ type: 'public-key' }] } } })
    t.equal(publicKey.allowCredentials.length, 1)
    const credential = await ceremony('request', publicKey)
    const body = { challenge_id: challenge.body.id, webauthn: { type: 'request', credential_response: credential } }
    t.match(await call(f, 'POST', `/factors/${factorId}/verify`, { ...body, webauthn: { type: 'create', credential_response: { ...credential, response: { clientDataJSON: 'e30', attestationObject: 'oA' } } } }, { token: second.token }), {
      status: 400, body: { message: 'WebAuthn type must be request for this challenge (the factor is verified)' },
    })
    const verified = await second.supabase.auth.mfa.verify({ factorId, challengeId: challenge.body.id, webauthn: { type: 'request', ...rpFromBrowser, credential_response: asBrowserCredential(credential) } } as never)
    t.error(verified.error)
    const claims = await verifyJwt(f.project.record, verified.data!.access_token)
    t.equal(claims.aal, 'aal2')
    t.same(methods(claims), ['mfa/webauthn', 'password'])
    t.match((await second.supabase.auth.mfa.getAuthenticatorAssuranceLevel()).data, { currentLevel: 'aal2', nextLevel: 'aal2' })
    assertion = { challengeId: challenge.body.id, body }
  })

  await t.test('replays are refused', async (t) => {
    const third = await signIn(f, 'ada@example.test')
    t.match(await call(f, 'POST', `/factors/${factorId}/verify`, assertion!.body, { token: third.token }), { status: 422, body: { code: 'mfa_ip_address_mismatch' } }, 'a used challenge')
    const fresh = await call<Challenge>(f, 'POST', `/factors/${factorId}/challenge`, {}, { token: third.token })
    const replayed = { challenge_id: fresh.body.id, webauthn: (assertion!.body as { webauthn: unknown }).webauthn }
    t.match(await call(f, 'POST', `/factors/${factorId}/verify`, replayed, { token: third.token }), {
      status: 422, body: { code: 'mfa_verification_failed', message: /^Failed to validate WebAuthn MFA response: .*challenge/ },
    }, 'an old assertion on a new challenge')
    t.equal((await verifyJwt(f.project.record, (await third.supabase.auth.getSession()).data.session!.access_token)).aal, 'aal1', 'still aal1')
  })

  await t.test('switches off: 422; unenrol', async (t) => {
    await setAuthOptions(cp, f.project.ref, { mfa_web_authn_verify_enabled: false, mfa_web_authn_enroll_enabled: false })
    t.match(await call<Challenge>(f, 'POST', `/factors/${factorId}/challenge`, {}, { token: ada.token }), { status: 422, body: { code: 'mfa_webauthn_verify_not_enabled' } })
    t.match(await ada.supabase.auth.mfa.enroll({ factorType: 'webauthn', friendlyName: 'Phone' }), { error: { status: 422, code: 'mfa_webauthn_enroll_not_enabled' } })
    await setAuthOptions(cp, f.project.ref, ON)
    const aal1 = await signIn(f, 'ada@example.test')
    t.match(await aal1.supabase.auth.mfa.unenroll({ factorId }), { error: { status: 422, code: 'insufficient_aal' } }, 'a verified factor needs aal2')
    const { data: session } = await ada.supabase.auth.getSession()
    const unenrolled = await ada.supabase.auth.mfa.unenroll({ factorId })
    t.error(unenrolled.error)
    const after = await call(f, 'GET', '/user', undefined, { token: session.session!.access_token })
    t.notOk(after.body.factors, 'no factors left')
    const refreshed = await ada.supabase.auth.refreshSession()
    t.equal((await verifyJwt(f.project.record, refreshed.data.session!.access_token)).aal, 'aal1', 'the session drops to aal1')
    t.same(methods(await verifyJwt(f.project.record, refreshed.data.session!.access_token)), ['password'], 'and loses mfa/webauthn')
  })
})

const CEREMONY_SCRIPT = `async function (type, publicKey) {
  const bytes = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4)), (c) => c.charCodeAt(0))
  const text = (b) => (b === null ? null : btoa(String.fromCharCode(...new Uint8Array(b))).replace(/[+]/g, '-').replace(/[/]/g, '_').replace(/=+$/, ''))
  const o = structuredClone(publicKey)
  o.challenge = bytes(o.challenge)
  for (const list of ['excludeCredentials', 'allowCredentials']) if (o[list]) o[list] = o[list].map((c) => ({ ...c, id: bytes(c.id) }))
  if (type === 'create') {
    o.user = { ...o.user, id: bytes(o.user.id) }
    const c = await navigator.credentials.create({ publicKey: o })
    const r = c.response
    return { id: c.id, rawId: text(c.rawId), type: c.type, clientExtensionResults: {}, authenticatorAttachment: c.authenticatorAttachment,
      response: { clientDataJSON: text(r.clientDataJSON), attestationObject: text(r.attestationObject), transports: r.getTransports() } }
  }
  const c = await navigator.credentials.get({ publicKey: o })
  const r = c.response
  return { id: c.id, rawId: text(c.rawId), type: c.type, clientExtensionResults: {}, authenticatorAttachment: c.authenticatorAttachment,
    response: { clientDataJSON: text(r.clientDataJSON), authenticatorData: text(r.authenticatorData), signature: text(r.signature), userHandle: text(r.userHandle) } }
}`
