// Linked identities (issue 25 item 5, and item 2's conversion of an anonymous
// user by linkIdentity) with the real supabase-js against the local OpenID
// stand-in for Google: the manual linking switch (off by default: 404),
// linkIdentity() by the implicit and the PKCE flow and by an ID token,
// getUserIdentities(), unlinkIdentity(), and each of GoTrue's refusals.
import crypto from 'node:crypto'
import { createClient, type SupabaseClient } from '@supabase/supabase-js'
import t from 'tap'
import { setAuthOptions, setGoogle } from '../../control-plane/auth-settings.ts'
import { verifyJwt } from '../../lib/jwt.ts'
import { runCli } from '../helpers/cli.ts'
import { startOidcProvider } from '../../dev/oidc-provider.ts'
import { authFixture, type AuthFixture, authSettingsApi, call, fragmentOf, SITE_URL } from './helpers.ts'

const APP = 'http://localhost:3000/welcome'

/** Follows redirects as a browser would until one leaves for the app (google.test.ts's browse). */
async function browse(start: string): Promise<string> {
  let url = start
  for (let i = 0; i < 6; i++) {
    const response = await fetch(url, { redirect: 'manual' })
    const location = response.headers.get('location')
    if (location === null) throw new Error(`no redirect from ${url}: ${response.status} ${await response.text()}`)
    const next = new URL(location, url).toString()
    if (next.startsWith('http://localhost:3000') || next.startsWith(SITE_URL)) return next
    url = next
  }
  throw new Error('too many redirects')
}

function redirectError(location: string) {
  const url = new URL(location)
  return Object.fromEntries(['error', 'error_code', 'error_description'].map((k) => [k, url.searchParams.get(k)]))
}

function client(f: AuthFixture, flowType: 'implicit' | 'pkce' = 'implicit'): SupabaseClient {
  return createClient(f.project.baseUrl, f.project.anonKey, { auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false, flowType } })
}

t.test('linked identities', async (t) => {
  const google = await startOidcProvider()
  t.teardown(() => google.close())
  const f = await authFixture(t, {
    BASEPLANE_GOOGLE_AUTHORIZATION_URL: google.authorizationUrl,
    BASEPLANE_GOOGLE_TOKEN_URL: google.tokenUrl,
    BASEPLANE_GOOGLE_CERTS_URL: google.certsUrl,
    BASEPLANE_GOOGLE_ISSUER: google.issuer,
  })
  const cp = f.test.platform.controlPlane
  const ref = f.project.ref
  await setGoogle(cp, ref, { clientId: google.client.id, clientSecret: google.client.secret, enabled: true })

  /** A confirmed email user, signed in with its password in its own client. */
  async function passwordUser(email: string, flowType: 'implicit' | 'pkce' = 'implicit') {
    const created = await f.admin().auth.admin.createUser({ email, password: 'password 123', email_confirm: true })
    if (created.error) throw created.error
    const supabase = client(f, flowType)
    const signedIn = await supabase.auth.signInWithPassword({ email, password: 'password 123' })
    if (signedIn.error) throw signedIn.error
    return { supabase, id: created.data.user!.id, token: signedIn.data.session!.access_token }
  }
  const link = (supabase: SupabaseClient) => supabase.auth.linkIdentity({ provider: 'google', options: { redirectTo: APP, skipBrowserRedirect: true } })

  const ada = await passwordUser('ada@example.com')

  await t.test('off by default: 404 manual_linking_disabled; the switch by admin API and CLI', async (t) => {
    const linked = await link(ada.supabase)
    t.same([linked.error?.status, linked.error?.code, linked.error?.message], [404, 'manual_linking_disabled', 'Manual linking is disabled'])
    const { data } = await ada.supabase.auth.getUserIdentities()
    const unlinked = await ada.supabase.auth.unlinkIdentity(data!.identities[0]!)
    t.same([unlinked.error?.status, unlinked.error?.code], [404, 'manual_linking_disabled'])
    const anonymous = await call(f, 'GET', '/user/identities/authorize?provider=google')
    t.same([anonymous.status, anonymous.body.code], [401, 'no_authorization'], 'a user token first')

    const api = authSettingsApi(f)
    t.match((await api('GET')).body, { security_manual_linking_enabled: false })
    t.match(await api('PATCH', { security_manual_linking_enabled: 'yes' }), { status: 400, body: { code: 'invalid_argument', message: /security_manual_linking_enabled must be true or false/ } })
    const env = { DATABASE_URL: f.test.catalogueUrl }
    let r = await runCli(['auth', 'settings', ref, '--manual-linking', 'maybe'], env)
    t.equal(r.code, 1)
    t.match(r.stderr, '--manual-linking must be true or false, got "maybe"')
    r = await runCli(['auth', 'settings', ref, '--manual-linking', 'true'], env)
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'manual linking        on (linkIdentity, unlinkIdentity)')
    t.match((await api('GET')).body, { security_manual_linking_enabled: true })
  })

  let googleIdentityId = ''
  await t.test('implicit flow: the identity joins the signed-in user, who gets a session', async (t) => {
    google.user = { sub: 'g-ada', email: 'ada.g@example.com', email_verified: true, name: 'Ada G' }
    const { data, error } = await link(ada.supabase)
    t.equal(error, null)
    t.equal(data.provider, 'google')
    t.ok(data.url!.startsWith(google.authorizationUrl), "the URL is Google's")
    const location = await browse(data.url!)
    t.ok(location.startsWith(`${APP}#`), location)
    const fragment = fragmentOf(location)
    const claims = await verifyJwt(f.project.record, fragment.access_token!)
    t.equal(claims.sub, ada.id, 'the same user, not a new one')
    t.equal(claims.email, 'ada@example.com', 'the user keeps its address')
    t.match(claims.app_metadata, { provider: 'email', providers: ['email', 'google'] })
    t.equal((claims.amr as Array<{ method: string }>)[0]!.method, 'oauth')

    const identities = await ada.supabase.auth.getUserIdentities()
    t.equal(identities.error, null)
    const list = identities.data!.identities
    t.same(list.map((i) => i.provider), ['email', 'google'])
    const g = list[1]!
    t.match(g, { id: 'g-ada', user_id: ada.id, provider: 'google', email: 'ada.g@example.com', identity_data: { sub: 'g-ada', email: 'ada.g@example.com', email_verified: true } })
    t.match(g.identity_id, /^[0-9a-f-]{36}$/)
    t.not(g.identity_id, g.id, 'identity_id is the row, id the provider subject')
    googleIdentityId = g.identity_id
    t.equal((await f.admin().auth.admin.listUsers()).data.users.length, 1, 'no user was created')

    // Without skip_http_redirect: a 302 to Google. An unknown provider: 400 validation_failed.
    const raw = await fetch(f.url('/user/identities/authorize?provider=google'), { headers: { apikey: f.project.anonKey, authorization: `Bearer ${ada.token}` }, redirect: 'manual' })
    t.equal(raw.status, 302)
    t.ok(raw.headers.get('location')!.startsWith(google.authorizationUrl))
    const github = await call(f, 'GET', '/user/identities/authorize?provider=github&skip_http_redirect=true', undefined, { token: ada.token })
    t.same([github.status, github.body.code], [400, 'validation_failed'])
  })

  await t.test('PKCE flow: ?code= redeemed by exchangeCodeForSession', async (t) => {
    const grace = await passwordUser('grace@example.com', 'pkce')
    google.user = { sub: 'g-grace', email: 'grace@example.com', email_verified: true, name: 'Grace' }
    const { data, error } = await link(grace.supabase)
    t.equal(error, null)
    t.notOk(new URL(data.url!).searchParams.has('code_challenge'), 'our PKCE challenge stays with us')
    const landed = new URL(await browse(data.url!))
    t.equal(landed.hash, '', 'no tokens in the URL')
    const exchanged = await grace.supabase.auth.exchangeCodeForSession(landed.searchParams.get('code')!)
    t.equal(exchanged.error, null)
    t.equal(exchanged.data.user?.id, grace.id)
    t.same(exchanged.data.user?.identities?.map((i) => i.provider), ['email', 'google'])
    t.ok(exchanged.data.session?.provider_token, 'the provider token comes with the session')
  })

  await t.test('conflicts: identity_already_exists, in the redirect and from the ID token grant', async (t) => {
    google.user = { sub: 'g-ada', email: 'ada.g@example.com', email_verified: true }
    const again = redirectError(await browse((await link(ada.supabase)).data.url!))
    t.same(again, { error: 'server_error', error_code: 'identity_already_exists', error_description: 'Identity is already linked' })
    const other = await passwordUser('other@example.com')
    const taken = redirectError(await browse((await link(other.supabase)).data.url!))
    t.same(taken, { error: 'server_error', error_code: 'identity_already_exists', error_description: 'Identity is already linked to another user' })
    t.same((await other.supabase.auth.getUserIdentities()).data!.identities.map((i) => i.provider), ['email'], 'nothing was linked')
  })

  await t.test('ID token link: no manual linking check; Authorization required', async (t) => {
    await setAuthOptions(cp, ref, { security_manual_linking_enabled: false })
    t.teardown(() => setAuthOptions(cp, ref, { security_manual_linking_enabled: true }))
    const hopper = await passwordUser('hopper@example.com')
    const raw = crypto.randomBytes(16).toString('hex')
    const nonce = crypto.createHash('sha256').update(raw).digest('hex')
    const token = await google.mintIdToken({ audience: google.client.id, nonce, user: { sub: 'g-hopper', email: 'hopper.g@example.com', email_verified: true } })
    const noAuth = await call(f, 'POST', '/token?grant_type=id_token', { provider: 'google', id_token: token, nonce: raw, link_identity: true })
    t.same([noAuth.status, noAuth.body], [400, { error: 'invalid request', error_description: 'Linking requires a valid user access token in Authorization' }])
    const linked = await hopper.supabase.auth.linkIdentity({ provider: 'google', token, nonce: raw })
    t.equal(linked.error, null)
    t.equal(linked.data.user?.id, hopper.id)
    t.same(linked.data.user?.identities?.map((i) => i.provider), ['email', 'google'])
    const claims = await verifyJwt(f.project.record, linked.data.session!.access_token)
    t.equal((claims.amr as Array<{ method: string }>)[0]!.method, 'oauth')
    const twice = await hopper.supabase.auth.linkIdentity({ provider: 'google', token: await google.mintIdToken({ audience: google.client.id, user: { sub: 'g-hopper', email: 'hopper.g@example.com' } }) })
    t.same([twice.error?.status, twice.error?.code, twice.error?.message], [422, 'identity_already_exists', 'Identity is already linked'])
  })

  await t.test('unlink: refusals, then the address and providers follow the remaining identities', async (t) => {
    const bad = await call(f, 'DELETE', '/user/identities/not-a-uuid', undefined, { token: ada.token })
    t.same([bad.status, bad.body.code, bad.body.message], [404, 'validation_failed', 'identity_id must be an UUID'])
    const missing = await call(f, 'DELETE', `/user/identities/${crypto.randomUUID()}`, undefined, { token: ada.token })
    t.same([missing.status, missing.body.code, missing.body.message], [422, 'identity_not_found', "Identity doesn't exist"])
    const other = await f.admin().auth.admin.listUsers()
    const hopperGoogle = other.data.users.find((u) => u.email === 'hopper@example.com')!.identities!.find((i) => i.provider === 'google')!
    const notMine = await ada.supabase.auth.unlinkIdentity(hopperGoogle)
    t.same([notMine.error?.status, notMine.error?.code], [422, 'identity_not_found'], "another user's identity is not found")

    const identities = (await ada.supabase.auth.getUserIdentities()).data!.identities
    const unlinked = await ada.supabase.auth.unlinkIdentity(identities.find((i) => i.identity_id === googleIdentityId)!)
    t.equal(unlinked.error, null)
    t.same(unlinked.data, {})
    let user = (await f.admin().auth.admin.getUserById(ada.id)).data.user!
    t.same(user.identities!.map((i) => i.provider), ['email'])
    t.same(user.app_metadata.providers, ['email'])
    const last = await ada.supabase.auth.unlinkIdentity(user.identities![0]!)
    t.same([last.error?.status, last.error?.code, last.error?.message], [422, 'single_identity_not_deletable', 'User must have at least 1 identity after unlinking'])

    // Link Google again, then drop the email identity: the address becomes Google's, and Google still signs the user in.
    google.user = { sub: 'g-ada', email: 'ada.g@example.com', email_verified: true }
    const relink = await link(ada.supabase)
    t.equal(relink.error, null)
    t.ok(fragmentOf(await browse(relink.data.url!)).access_token, 'linked again')
    user = (await f.admin().auth.admin.getUserById(ada.id)).data.user!
    const email = user.identities!.find((i) => i.provider === 'email')!
    t.equal((await ada.supabase.auth.unlinkIdentity(email)).error, null)
    user = (await f.admin().auth.admin.getUserById(ada.id)).data.user!
    t.equal(user.email, 'ada.g@example.com', 'the address of the remaining identity')
    t.match(user.app_metadata, { provider: 'google', providers: ['google'] })
    const signIn = await browse((await f.anon().auth.signInWithOAuth({ provider: 'google', options: { redirectTo: APP } })).data.url!)
    t.equal((await verifyJwt(f.project.record, fragmentOf(signIn).access_token!)).sub, ada.id, 'Google signs the same user in')
  })

  await t.test('an anonymous user becomes permanent by linking Google', async (t) => {
    await setAuthOptions(cp, ref, { external_anonymous_users_enabled: true })
    const supabase = client(f)
    const anon = await supabase.auth.signInAnonymously()
    t.equal(anon.error, null)
    google.user = { sub: 'g-newbie', email: 'newbie@example.com', email_verified: true, name: 'Newbie' }
    const location = await browse((await link(supabase)).data.url!)
    const claims = await verifyJwt(f.project.record, fragmentOf(location).access_token!)
    t.equal(claims.sub, anon.data.user!.id)
    t.equal(claims.is_anonymous, false)
    t.equal(claims.email, 'newbie@example.com')
    const user = (await f.admin().auth.admin.getUserById(anon.data.user!.id)).data.user!
    t.equal(user.is_anonymous, false)
    t.ok(user.email_confirmed_at, 'Google verified the address')
    t.match(user.app_metadata, { provider: 'google', providers: ['google'] })

    // Another anonymous user linking an account whose address a user already has: 400 email_exists, nothing written.
    const second = client(f)
    const other = await second.auth.signInAnonymously()
    google.user = { sub: 'g-grace-2', email: 'grace@example.com', email_verified: true }
    t.same(redirectError(await browse((await link(second)).data.url!)), { error: 'invalid_request', error_code: 'email_exists', error_description: 'A user with this email address has already been registered' })
    const still = (await f.admin().auth.admin.getUserById(other.data.user!.id)).data.user!
    t.same([still.is_anonymous, still.identities, still.email ?? ''], [true, [], ''])
  })
})
