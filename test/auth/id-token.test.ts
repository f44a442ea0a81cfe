// Native Google sign-in (issue 15 item 6): supabase.auth.signInWithIdToken
// ({provider: 'google', token, nonce}) with ID tokens the local OpenID
// stand-in signs as Google's SDKs would hand them to an iOS, Android or web
// app. The accepted audiences (the web client ID and the operator's extra
// app client IDs, set by the control plane and the CLI), the nonce rule,
// every refusal in GoTrue's words, and users created and linked as the web
// flow does.
import crypto from 'node:crypto'
import t from 'tap'
import { setAuthOptions, setGoogle } from '../../control-plane/auth-settings.ts'
import { startOidcProvider, type OidcProvider } from '../../dev/oidc-provider.ts'
import { runCli } from '../helpers/cli.ts'
import { authFixture, call, type AuthFixture } from './helpers.ts'

const IOS = '1234-ios.apps.googleusercontent.com'
const ANDROID = '1234-android.apps.googleusercontent.com'

/** The built command line on the test's catalogue (test/helpers/cli.ts). */
const cli = (catalogueUrl: string, args: string[], input?: string) => runCli(args, { DATABASE_URL: catalogueUrl }, input)

/** A raw nonce as the app makes it, and what it gives Google (SHA-256, hex). */
function nonces() {
  const raw = crypto.randomBytes(16).toString('hex')
  return { raw, hashed: crypto.createHash('sha256').update(raw).digest('hex') }
}

function claimsOf(accessToken: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>
}

t.test('signInWithIdToken with Google', async (t) => {
  const google: OidcProvider = await startOidcProvider()
  t.teardown(() => google.close())
  const f: AuthFixture = await authFixture(t, {
    BASEPLANE_GOOGLE_AUTHORIZATION_URL: google.authorizationUrl,
    BASEPLANE_GOOGLE_TOKEN_URL: google.tokenUrl,
    BASEPLANE_GOOGLE_CERTS_URL: google.certsUrl,
    BASEPLANE_GOOGLE_ISSUER: google.issuer,
  })
  const cp = f.test.platform.controlPlane
  const supabase = f.anon()
  const signIn = (token: string, nonce?: string) => supabase.auth.signInWithIdToken({ provider: 'google', token, nonce })

  await t.test('not configured: GoTrue\'s provider_disabled', async (t) => {
    const { hashed, raw } = nonces()
    const r = await signIn(await google.mintIdToken({ audience: google.client.id, nonce: hashed }), raw)
    t.same([r.error?.status, r.error?.code, r.error?.message], [400, 'provider_disabled', 'Provider (issuer "https://accounts.google.com") is not enabled'])
    await setGoogle(cp, f.project.ref, { clientId: google.client.id, clientSecret: google.client.secret })
    const off = await signIn(await google.mintIdToken({ audience: google.client.id, nonce: hashed }), raw)
    t.equal(off.error?.code, 'provider_disabled', 'still off until switched on')
  })

  await t.test('app client IDs: saved, checked, shown', async (t) => {
    const on = await setGoogle(cp, f.project.ref, { enabled: true, additionalClientIds: [IOS, ` ${IOS} `] })
    t.same(on.additional_client_ids, [IOS], 'trimmed, once')
    t.equal(on.offered, true)
    await t.rejects(setGoogle(cp, f.project.ref, { additionalClientIds: ['two words'] }), { code: 'invalid_argument', message: /google\.additional_client_ids: "two words" is not a client ID/ })
    await t.rejects(setGoogle(cp, f.project.ref, { additionalClientIds: ['a,b'] }), { code: 'invalid_argument' })
    const url = f.test.catalogueUrl
    let r = await cli(url, ['auth', 'google', f.project.ref, '--additional-client-ids', `${IOS},${ANDROID}`, '--json'])
    t.equal(r.code, 0, r.stderr)
    t.same(JSON.parse(r.stdout).additional_client_ids, [IOS, ANDROID])
    r = await cli(url, ['auth', 'google', f.project.ref])
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, `app client IDs  ${IOS}, ${ANDROID}`)
    t.notOk(r.stdout.includes(google.client.secret), 'the secret is not shown')
    r = await cli(url, ['auth', 'google', f.project.ref, '--additional-client-ids', 'has space'])
    t.equal(r.code, 1)
    t.match(r.stderr, 'is not a client ID')
  })

  let userId = ''
  await t.test('the iOS app signs in: a new user, a session', async (t) => {
    google.user = { sub: '1000001', email: 'ios.user@example.com', email_verified: true, name: 'Ios User', picture: 'https://example.test/i.png' }
    const { raw, hashed } = nonces()
    const { data, error } = await signIn(await google.mintIdToken({ audience: IOS, nonce: hashed }), raw)
    t.error(error)
    t.ok(data.session?.access_token)
    t.ok(data.session?.refresh_token)
    t.equal(data.user?.email, 'ios.user@example.com')
    t.match(data.user?.app_metadata, { provider: 'google', providers: ['google'] })
    t.match(data.user?.identities, [{ provider: 'google', id: '1000001', identity_data: { sub: '1000001', email: 'ios.user@example.com', email_verified: true, full_name: 'Ios User' } }])
    t.match(claimsOf(data.session!.access_token), { sub: data.user!.id, amr: [{ method: 'oauth' }], aal: 'aal1' })
    userId = data.user!.id
    const me = await supabase.auth.getUser(data.session!.access_token)
    t.error(me.error)
    t.equal(me.data.user?.id, userId)
  })

  await t.test('the Android app and the web client: the same Google account is the same user', async (t) => {
    for (const audience of [ANDROID, google.client.id, [google.client.id, 'someone-else']]) {
      const { raw, hashed } = nonces()
      const { data, error } = await signIn(await google.mintIdToken({ audience, nonce: hashed }), raw)
      t.error(error, String(audience))
      t.equal(data.user?.id, userId)
    }
    // Without a nonce on either side (Google's iOS SDK before nonce support).
    const bare = await signIn(await google.mintIdToken({ audience: ANDROID }))
    t.error(bare.error)
    t.equal(bare.data.user?.id, userId)
    // With the access token the SDK also returned: at_hash checked.
    const accessToken = crypto.randomBytes(24).toString('base64url')
    const withAt = await supabase.auth.signInWithIdToken({ provider: 'google', token: await google.mintIdToken({ audience: IOS, accessToken }), access_token: accessToken })
    t.error(withAt.error)
  })

  await t.test('an existing email user gets the Google identity linked', async (t) => {
    const created = await f.admin().auth.admin.createUser({ email: 'linked@example.com', password: 'linked password', email_confirm: true })
    t.error(created.error)
    google.user = { sub: '1000002', email: 'linked@example.com', email_verified: true, name: 'Linked' }
    const { raw, hashed } = nonces()
    const { data, error } = await signIn(await google.mintIdToken({ audience: IOS, nonce: hashed }), raw)
    t.error(error)
    t.equal(data.user?.id, created.data.user!.id)
    t.same(data.user?.identities?.map((i) => i.provider).sort(), ['email', 'google'])
    t.error((await supabase.auth.signInWithPassword({ email: 'linked@example.com', password: 'linked password' })).error, 'the password still works')
  })

  await t.test('refusals in GoTrue\'s words', async (t) => {
    google.user = { sub: '1000003', email: 'refused@example.com', email_verified: true }
    const { raw, hashed } = nonces()
    const expectOAuth = async (label: string, token: Promise<string> | string, nonce: string | undefined, message: string) => {
      const r = await signIn(await token, nonce)
      t.same([r.error?.status, r.error?.code, r.error?.message], [400, undefined, message], label)
      t.equal(r.data.session, null)
    }
    await expectOAuth('another app\'s audience', google.mintIdToken({ audience: 'other.apps.googleusercontent.com', nonce: hashed }), raw, 'Unacceptable audience in id_token: [other.apps.googleusercontent.com]')
    await expectOAuth('nonce mismatch', google.mintIdToken({ audience: IOS, nonce: hashed }), 'another raw nonce', 'Nonces mismatch')
    await expectOAuth('the raw nonce in the token is not its hash', google.mintIdToken({ audience: IOS, nonce: raw }), raw, 'Nonces mismatch')
    await expectOAuth('a nonce only in the token', google.mintIdToken({ audience: IOS, nonce: hashed }), undefined, 'Passed nonce and nonce in id_token should either both exist or not.')
    await expectOAuth('a nonce only in the request', google.mintIdToken({ audience: IOS }), raw, 'Passed nonce and nonce in id_token should either both exist or not.')
    await expectOAuth('no sub', google.mintIdToken({ audience: IOS, nonce: hashed, omitSub: true }), raw, 'Missing sub claim in id_token')
    await expectOAuth('not a JWT', 'not-a-token', raw, 'Bad ID token')
    const atHash = await supabase.auth.signInWithIdToken({ provider: 'google', token: await google.mintIdToken({ audience: IOS, accessToken: 'the real one' }), access_token: 'another one' })
    t.same([atHash.error?.status, atHash.error?.message], [400, 'Bad ID token'], 'an access token that is not the at_hash\'s')
    for (const tampering of [{ expired: true }, { signWithOtherKey: true }, { issuer: 'https://accounts.evil.example' }]) {
      google.tampering = tampering
      await expectOAuth(`tampered: ${Object.keys(tampering)[0]}`, google.mintIdToken({ audience: IOS, nonce: hashed }), raw, 'Bad ID token')
    }
    google.tampering = {}

    const raw400 = await call(f, 'POST', '/token?grant_type=id_token', { provider: 'google' })
    t.same([raw400.status, raw400.body], [400, { error: 'invalid request', error_description: 'id_token required' }], 'the OAuth error shape')
    t.equal(raw400.headers.get('x-sb-error-code'), null)
    const noProvider = await call(f, 'POST', '/token?grant_type=id_token', { id_token: 'x' })
    t.same(noProvider.body, { error: 'invalid request', error_description: 'provider or client_id and issuer required' })

    const apple = await supabase.auth.signInWithIdToken({ provider: 'apple', token: 'x.y.z' })
    t.same([apple.error?.status, apple.error?.code, apple.error?.message], [400, 'provider_disabled', 'Provider (issuer "https://appleid.apple.com") is not enabled'])
    const github = await supabase.auth.signInWithIdToken({ provider: 'github' as never, token: 'x.y.z' })
    t.same([github.error?.status, github.error?.code, github.error?.message], [400, 'validation_failed', 'Custom OIDC provider "github" not allowed'])
    const byIssuer = await call(f, 'POST', '/token?grant_type=id_token', { id_token: 'x.y.z', client_id: IOS, issuer: 'https://login.microsoftonline.com/tenant/v2.0' })
    t.same([byIssuer.status, byIssuer.body.code, byIssuer.body.message], [400, 'provider_disabled', 'Provider (issuer "https://login.microsoftonline.com/tenant/v2.0") is not enabled'])

    google.user = { sub: '1000004', email: 'unverified@example.com', email_verified: false }
    const unverified = await signIn(await google.mintIdToken({ audience: IOS, nonce: hashed }), raw)
    t.same([unverified.error?.status, unverified.error?.code], [422, 'provider_email_needs_verification'])
  })

  await t.test('sign-ups off: existing users only', async (t) => {
    await setAuthOptions(cp, f.project.ref, { disable_signup: true })
    google.user = { sub: '1000005', email: 'newcomer@example.com', email_verified: true }
    const { raw, hashed } = nonces()
    const r = await signIn(await google.mintIdToken({ audience: IOS, nonce: hashed }), raw)
    t.same([r.error?.status, r.error?.code, r.error?.message], [422, 'signup_disabled', 'Signups not allowed for this instance'])
    google.user = { sub: '1000001', email: 'ios.user@example.com', email_verified: true }
    const known = await signIn(await google.mintIdToken({ audience: IOS, nonce: hashed }), raw)
    t.error(known.error)
    t.equal(known.data.user?.id, userId)
    await setAuthOptions(cp, f.project.ref, { disable_signup: false })
  })

  await t.test('switched off again: provider_disabled; app IDs removed: refused', async (t) => {
    await setGoogle(cp, f.project.ref, { additionalClientIds: [] })
    const { raw, hashed } = nonces()
    const r = await signIn(await google.mintIdToken({ audience: IOS, nonce: hashed }), raw)
    t.equal(r.error?.message, `Unacceptable audience in id_token: [${IOS}]`)
    await setGoogle(cp, f.project.ref, { enabled: false })
    const off = await signIn(await google.mintIdToken({ audience: google.client.id, nonce: hashed }), raw)
    t.equal(off.error?.code, 'provider_disabled')
  })
})
