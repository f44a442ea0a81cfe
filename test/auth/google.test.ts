// Sign-in with Google (issue 6) against a local OpenID provider stand-in:
// offered only when fully configured, /authorize's redirect, the browser-style
// flow with supabase-js signInWithOAuth (implicit and PKCE) followed redirect
// by redirect, linking and creating users, and every refusal (provider errors,
// tampered state, tampered ID tokens) with its error, error_code and
// error_description.
import { createClient } from '@supabase/supabase-js'
import t from 'tap'
import { setAuthOptions, setGoogle } from '../../control-plane/auth-settings.ts'
import { verifyJwt } from '../../lib/jwt.ts'
import { startOidcProvider, type OidcProvider } from '../../dev/oidc-provider.ts'
import { authFixture, authPlatform, call, fragmentOf, SITE_URL, type AuthFixture } from './helpers.ts'

const APP = 'http://localhost:3000/welcome'

// One provider stand-in and one platform for the tests below (the throttle's has its own): each test has a project of its own.
const google = await startOidcProvider()
t.teardown(() => google.close())
const shared = await authPlatform(t, {
  BASEPLANE_GOOGLE_AUTHORIZATION_URL: google.authorizationUrl,
  BASEPLANE_GOOGLE_TOKEN_URL: google.tokenUrl,
  BASEPLANE_GOOGLE_CERTS_URL: google.certsUrl,
  BASEPLANE_GOOGLE_ISSUER: google.issuer,
})

async function setup(): Promise<{ f: AuthFixture; google: OidcProvider }> {
  return { f: await shared.fixture(), google }
}

async function configure(f: AuthFixture, google: OidcProvider) {
  return setGoogle(f.test.platform.controlPlane, f.project.ref, { clientId: google.client.id, clientSecret: google.client.secret, enabled: true })
}

/** Follows redirects one by one, as a browser would, until one leaves for the app; that Location, and every hop. */
async function browse(start: string, app = ['http://localhost:3000', SITE_URL]): Promise<{ location: string; hops: Array<{ url: string; status: number }> }> {
  const hops: Array<{ url: string; status: number }> = []
  let url = start
  for (let i = 0; i < 6; i++) {
    const response = await fetch(url, { redirect: 'manual' })
    hops.push({ url, status: response.status })
    const location = response.headers.get('location')
    if (location === null) throw new Error(`no redirect from ${url}: ${response.status} ${await response.text()}`)
    const next = new URL(location, url).toString()
    if (app.some((prefix) => next.startsWith(prefix))) return { location: next, hops }
    url = next
  }
  throw new Error('too many redirects')
}

function errorOf(location: string) {
  const url = new URL(location)
  const query = Object.fromEntries(['error', 'error_code', 'error_description'].map((k) => [k, url.searchParams.get(k)]))
  const fragment = fragmentOf(location)
  return { query, fragment }
}

t.test('offered only when switch, client ID and secret are all set; saving takes effect at once', async (t) => {
  const { f, google } = await setup()
  const authorize = () => fetch(f.url(`/authorize?provider=google&redirect_to=${encodeURIComponent(APP)}`), { redirect: 'manual' })
  const settings = async () => (await call<{ external: { google: boolean } }>(f, 'GET', '/settings')).body.external.google
  const refused = async (label: string) => {
    const r = await authorize()
    t.equal(r.status, 400, `${label}: 400`)
    t.same(await r.json(), { code: 400, error_code: 'validation_failed', msg: 'Unsupported provider: provider is not enabled' }, `${label}: GoTrue's error`)
    t.equal(await settings(), false, `${label}: not in /settings`)
  }
  await refused('nothing set')
  const cp = f.test.platform.controlPlane
  t.same((await setGoogle(cp, f.project.ref, { clientId: google.client.id })).missing, ['client secret', 'the on switch (enable)'])
  await refused('client ID only')
  t.same((await setGoogle(cp, f.project.ref, { clientSecret: google.client.secret })).missing, ['the on switch (enable)'])
  await refused('switch off')
  const on = await setGoogle(cp, f.project.ref, { enabled: true })
  t.match(on, { offered: true, missing: [], client_id: google.client.id, client_secret_set: true })
  t.notOk(JSON.stringify(on).includes(google.client.secret), 'the secret is never shown again')
  t.equal(await settings(), true, 'offered in /settings')
  t.equal((await authorize()).status, 302, 'offered at /authorize')
  await setGoogle(cp, f.project.ref, { enabled: false })
  await refused('switched off again')
  const other = await call(f, 'GET', '/authorize?provider=github')
  t.equal(other.status, 400)
  t.equal(other.body.code, 'validation_failed')
})

t.test('/authorize: scopes, exact callback address, signed state, redirect_to checked', async (t) => {
  const { f, google } = await setup()
  await configure(f, google)
  const bad = await fetch(f.url('/authorize?provider=google&redirect_to=https://evil.example.test/'), { redirect: 'manual' })
  t.equal(bad.status, 400)
  t.match(await bad.json(), { error_code: 'validation_failed', msg: /redirect_to "https:\/\/evil.example.test\/" is not allowed/ })
  const challenge = 'x'.repeat(43)
  const r = await fetch(f.url(`/authorize?provider=google&redirect_to=${encodeURIComponent(APP)}&scopes=https://www.googleapis.com/auth/calendar.readonly&access_type=offline&prompt=consent&code_challenge=${challenge}&code_challenge_method=s256`), { redirect: 'manual' })
  t.equal(r.status, 302)
  const location = new URL(r.headers.get('location')!)
  t.equal(`${location.origin}${location.pathname}`, google.authorizationUrl)
  const q = location.searchParams
  t.equal(q.get('client_id'), google.client.id)
  t.equal(q.get('redirect_uri'), `${f.project.baseUrl}/auth/v1/callback`, 'redirect_uri is exactly {base_url}/auth/v1/callback')
  t.equal(q.get('response_type'), 'code')
  t.equal(q.get('scope'), 'openid email profile https://www.googleapis.com/auth/calendar.readonly')
  t.equal(q.get('access_type'), 'offline', 'other parameters go on to Google')
  t.equal(q.get('prompt'), 'consent')
  t.notOk(q.has('code_challenge'), 'our PKCE challenge stays with us')
  t.notOk(q.has('redirect_to'))
  t.match(q.get('nonce'), /^[A-Za-z0-9_-]{43}$/)
  const state = q.get('state')!
  t.equal(state.split('.').length, 3, 'the state is a signed token')
  const claims = JSON.parse(Buffer.from(state.split('.')[1]!, 'base64url').toString())
  t.equal(claims.exp - claims.iat, 300, 'and expires')
  await t.rejects(verifyJwt(f.project.record, state), 'not signed with the access-token key')
})

t.test('browser-style flow with supabase-js (implicit): new user, then the same user again', async (t) => {
  const { f, google } = await setup()
  await configure(f, google)
  const supabase = f.anon()
  const { data, error } = await supabase.auth.signInWithOAuth({ provider: 'google', options: { redirectTo: APP } })
  t.error(error)
  t.match(data.url, `${f.project.baseUrl}/auth/v1/authorize?provider=google&redirect_to=`)
  const { location, hops } = await browse(data.url!)
  t.same(hops.map((h) => h.status), [302, 302, 302], 'authorize, provider, callback')
  t.ok(hops[2]!.url.startsWith(`${f.project.baseUrl}/auth/v1/callback?`), 'the provider came back to our callback')
  t.ok(location.startsWith(`${APP}#`), `lands on redirect_to with a fragment: ${location}`)
  const fragment = fragmentOf(location)
  t.same(Object.keys(fragment).sort(), ['access_token', 'expires_at', 'expires_in', 'provider_token', 'refresh_token', 'sb', 'token_type'])
  t.equal(google.tokenRequests.length, 1)
  t.equal(google.tokenRequests[0]!.get('redirect_uri'), `${f.project.baseUrl}/auth/v1/callback`)
  const claims = await verifyJwt(f.project.record, fragment.access_token!)
  t.match(claims, { email: 'ada@example.com', aal: 'aal1', app_metadata: { provider: 'google', providers: ['google'] }, user_metadata: { name: 'Ada Lovelace', email_verified: true } })
  t.equal((claims.amr as Array<{ method: string }>)[0]!.method, 'oauth')
  const session = await supabase.auth.setSession({ access_token: fragment.access_token!, refresh_token: fragment.refresh_token! })
  t.error(session.error)
  const user = session.data.user!
  t.ok(user.email_confirmed_at, 'Google verified the address')
  t.match(user.identities, [{ provider: 'google', id: '1234567890', identity_data: { sub: '1234567890', email: 'ada@example.com', email_verified: true, name: 'Ada Lovelace', full_name: 'Ada Lovelace', picture: 'https://example.test/ada.png', avatar_url: 'https://example.test/ada.png', iss: google.issuer, provider_id: '1234567890' }, email: 'ada@example.com' }])

  const again = await browse((await f.anon().auth.signInWithOAuth({ provider: 'google', options: { redirectTo: APP } })).data.url!)
  const second = await verifyJwt(f.project.record, fragmentOf(again.location).access_token!)
  t.equal(second.sub, user.id, 'the same Google account signs in the same user')
  t.not(second.session_id, claims.session_id, 'in a new session')

  // Replaying the callback: its state is spent.
  const replay = await fetch(hops[2]!.url, { redirect: 'manual' })
  t.equal(replay.status, 303)
  const replayed = errorOf(replay.headers.get('location')!)
  t.ok(replay.headers.get('location')!.startsWith(SITE_URL), 'a bad state goes to the site URL')
  t.same(replayed.query, { error: 'invalid_request', error_code: 'bad_oauth_state', error_description: 'OAuth state not found or expired' })
  t.same(replayed.fragment, { ...replayed.query, sb: '' })
})

t.test('browser-style flow with supabase-js (PKCE): ?code= redeemed by exchangeCodeForSession', async (t) => {
  const { f, google } = await setup()
  await configure(f, google)
  google.user = { sub: '42', email: 'Grace@Example.com', email_verified: true, name: 'Grace Hopper' }
  const supabase = createClient(f.project.baseUrl, f.project.anonKey, { auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false, flowType: 'pkce' } })
  const { data } = await supabase.auth.signInWithOAuth({ provider: 'google', options: { redirectTo: APP } })
  t.match(data.url, /code_challenge=[A-Za-z0-9_-]{43}&code_challenge_method=s256/)
  const { location, hops } = await browse(data.url!)
  const landed = new URL(location)
  t.equal(`${landed.origin}${landed.pathname}`, APP)
  t.equal(landed.hash, '', 'no tokens in the URL')
  const authCode = landed.searchParams.get('code')!
  t.match(authCode, /^[0-9a-f-]{36}$/)
  const replay = await fetch(hops[2]!.url, { redirect: 'manual' })
  t.equal(replay.status, 303)
  t.same(errorOf(replay.headers.get('location')!).query, { error: 'invalid_request', error_code: 'flow_state_already_used', error_description: 'State has already been used' }, 'a callback replayed before the exchange')
  const exchanged = await supabase.auth.exchangeCodeForSession(authCode)
  t.error(exchanged.error)
  t.equal(exchanged.data.user?.email, 'grace@example.com')
  t.ok(exchanged.data.session?.provider_token, 'the provider token comes with the session')
  const claims = await verifyJwt(f.project.record, exchanged.data.session!.access_token)
  t.equal((claims.amr as Array<{ method: string }>)[0]!.method, 'oauth')
  const twice = await call(f, 'POST', '/token?grant_type=pkce', { auth_code: authCode, code_verifier: 'v'.repeat(43) })
  t.equal(twice.status, 404)
  t.equal(twice.body.code, 'flow_state_not_found', 'a code is redeemed once')

  const spent = await fetch(hops[2]!.url, { redirect: 'manual' })
  t.equal(spent.status, 303)
  t.same(errorOf(spent.headers.get('location')!).query, { error: 'invalid_request', error_code: 'bad_oauth_state', error_description: 'OAuth state not found or expired' }, 'once redeemed, the flow is gone')

  // The raw grant with a wrong verifier.
  const raw = await browse((await supabase.auth.signInWithOAuth({ provider: 'google', options: { redirectTo: APP } })).data.url!)
  const wrong = await call(f, 'POST', '/token?grant_type=pkce', { auth_code: new URL(raw.location).searchParams.get('code'), code_verifier: 'w'.repeat(56) })
  t.equal(wrong.status, 400)
  t.equal(wrong.body.code, 'bad_code_verifier')
})

t.test('two sign-ins in flight, told apart by sb_flow_id (auth-js 2.119 experimental.appendPkceFlowIdToRedirects)', async (t) => {
  const { f, google } = await setup()
  await configure(f, google)
  google.user = { sub: '43', email: 'ada@example.com', email_verified: true, name: 'Ada Lovelace' }
  const storage = new Map<string, string>()
  const supabase = createClient(f.project.baseUrl, f.project.anonKey, {
    auth: {
      persistSession: true, autoRefreshToken: false, detectSessionInUrl: false, flowType: 'pkce',
      storage: { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => void storage.set(k, v), removeItem: (k) => void storage.delete(k) },
      experimental: { appendPkceFlowIdToRedirects: true },
    },
  })
  const started = [await supabase.auth.signInWithOAuth({ provider: 'google', options: { redirectTo: APP } }), await supabase.auth.signInWithOAuth({ provider: 'google', options: { redirectTo: APP } })]
  for (const { data } of started) {
    t.match(data.flowId, /^[0-9a-f]{32}$/)
    t.equal(new URL(data.url!).searchParams.get('redirect_to'), `${APP}?sb_flow_id=${data.flowId}`, 'the app asks for its redirect with the flow id')
  }
  // The first flow finishes after the second started: its verifier is found by its flow id, not the latest one.
  for (const { data } of started) {
    const landed = new URL((await browse(data.url!)).location)
    t.equal(`${landed.origin}${landed.pathname}`, APP)
    t.equal(landed.searchParams.get('sb_flow_id'), data.flowId, 'the flow id comes back beside the code')
    const exchanged = await supabase.auth.exchangeCodeForSession(landed.searchParams.get('code')!, { flowId: data.flowId! })
    t.error(exchanged.error)
    t.equal(exchanged.data.user?.email, 'ada@example.com')
  }
})

t.test('linking: an existing address gets the Google identity', async (t) => {
  const { f, google } = await setup()
  await configure(f, google)
  const existing = await f.admin().auth.admin.createUser({ email: 'ada@example.com', password: 'password 123', email_confirm: true, user_metadata: { team: 'engines' } })
  const { location } = await browse((await f.anon().auth.signInWithOAuth({ provider: 'google', options: { redirectTo: APP } })).data.url!)
  const claims = await verifyJwt(f.project.record, fragmentOf(location).access_token!)
  t.equal(claims.sub, existing.data.user!.id, 'linked to the user with that address')
  t.match(claims.app_metadata, { provider: 'email', providers: ['email', 'google'] })
  t.match(claims.user_metadata, { team: 'engines', name: 'Ada Lovelace' })
  const user = (await f.admin().auth.admin.getUserById(existing.data.user!.id)).data.user!
  t.same(user.identities!.map((i) => i.provider).sort(), ['email', 'google'])
  t.error((await f.anon().auth.signInWithPassword({ email: 'ada@example.com', password: 'password 123' })).error, 'the password still works')

  // An unconfirmed sign-up with the same address loses its password: whoever made it never proved the address.
  google.user = { sub: '77', email: 'mallory-target@example.com', email_verified: true, name: 'Target' }
  const squatter = await f.anon().auth.signUp({ email: 'mallory-target@example.com', password: 'squatter password' })
  t.error(squatter.error)
  const taken = await browse((await f.anon().auth.signInWithOAuth({ provider: 'google', options: { redirectTo: APP } })).data.url!)
  const target = await verifyJwt(f.project.record, fragmentOf(taken.location).access_token!)
  t.equal(target.sub, squatter.data.user!.id)
  t.match(target.app_metadata, { provider: 'google', providers: ['google'] })
  const signIn = await f.anon().auth.signInWithPassword({ email: 'mallory-target@example.com', password: 'squatter password' })
  t.equal(signIn.error?.code, 'invalid_credentials', "the squatter's password is gone")
})

t.test('refusals redirect with error, error_code, error_description', async (t) => {
  const { f, google } = await setup()
  await configure(f, google)
  const start = async () => (await f.anon().auth.signInWithOAuth({ provider: 'google', options: { redirectTo: APP } })).data.url!
  const refused = async (label: string, expected: Record<string, string>) => {
    const { location } = await browse(await start())
    t.ok(location.startsWith(`${APP}?`), `${label}: back to redirect_to`)
    const { query, fragment } = errorOf(location)
    t.same(query, expected, `${label}: query`)
    t.same(fragment, { ...expected, sb: '' }, `${label}: fragment`)
    t.notOk('access_token' in fragment)
  }
  const profile = { error: 'server_error', error_code: 'unexpected_failure', error_description: 'Error getting user profile from external provider' }

  google.denyWith = 'access_denied'
  await refused('the user cancels at Google', { error: 'access_denied', error_code: 'bad_oauth_callback', error_description: 'Google sign-in failed: access_denied' })
  google.denyWith = undefined
  google.tampering = { expired: true }
  await refused('expired ID token', profile)
  google.tampering = { audience: 'someone-else.apps.example.test' }
  await refused('ID token for another client', profile)
  google.tampering = { issuer: 'https://issuer.example.test' }
  await refused('ID token from another issuer', profile)
  google.tampering = { signWithOtherKey: true }
  await refused('ID token signed with another key', profile)
  google.tampering = { emailVerified: false }
  await refused('unverified address', { error: 'access_denied', error_code: 'provider_email_needs_verification', error_description: 'Unverified email with google. Verify the address with Google, then sign in again.' })
  google.tampering = {}
  t.equal((await f.admin().auth.admin.listUsers()).data.users.length, 0, 'no user was created by any refusal')

  await setAuthOptions(f.test.platform.controlPlane, f.project.ref, { disable_signup: true })
  await refused('sign-ups off', { error: 'access_denied', error_code: 'signup_disabled', error_description: 'Signups not allowed for this instance' })
  await setAuthOptions(f.test.platform.controlPlane, f.project.ref, { disable_signup: false })

  // Callbacks that never came from Google.
  const authorized = await fetch(await start(), { redirect: 'manual' }).then((r) => fetch(r.headers.get('location')!, { redirect: 'manual' }))
  const callback = new URL(authorized.headers.get('location')!)
  const state = callback.searchParams.get('state')!
  const hit = async (query: string) => {
    const r = await fetch(`${f.project.baseUrl}/auth/v1/callback?${query}`, { redirect: 'manual' })
    return { status: r.status, location: r.headers.get('location')!, ...errorOf(r.headers.get('location')!) }
  }
  const noState = await hit('code=abc')
  t.equal(noState.status, 303)
  t.ok(noState.location.startsWith(SITE_URL))
  t.same(noState.query, { error: 'invalid_request', error_code: 'bad_oauth_callback', error_description: 'OAuth state parameter missing' })
  const [h, p, s] = state.split('.')
  const forged = JSON.parse(Buffer.from(p!, 'base64url').toString())
  forged.flow_state_id = '00000000-0000-4000-8000-000000000000'
  const tampered = await hit(`code=abc&state=${h}.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${s}`)
  t.equal(tampered.status, 303)
  t.same(tampered.query, { error: 'invalid_request', error_code: 'bad_oauth_state', error_description: 'OAuth state parameter is invalid' })
  t.same(tampered.fragment, { ...tampered.query, sb: '' })
  const garbage = await hit('code=abc&state=garbage')
  t.same(garbage.query, { error: 'invalid_request', error_code: 'bad_oauth_state', error_description: 'OAuth state parameter is invalid' })
  const noCode = await hit(`state=${state}`)
  t.equal(noCode.status, 302)
  t.ok(noCode.location.startsWith(APP), 'a valid state knows where to go back to')
  t.same(noCode.query, { error: 'invalid_request', error_code: 'bad_oauth_callback', error_description: 'OAuth callback with missing authorization code missing' })
  const anotherState = new URL((await fetch(await start(), { redirect: 'manual' }).then((r) => fetch(r.headers.get('location')!, { redirect: 'manual' }))).headers.get('location')!).searchParams.get('state')!
  const badCode = await hit(`code=not-a-code&state=${anotherState}`)
  t.same(badCode.query, { error: 'server_error', error_code: 'unexpected_failure', error_description: 'Unable to exchange external code: not-a-code' })
})

t.test('failed callbacks feed the throttle', async (t) => {
  const f = await authFixture(t, {
    BASEPLANE_THROTTLE_MAX_FAILURES: '2',
    BASEPLANE_GOOGLE_AUTHORIZATION_URL: google.authorizationUrl,
    BASEPLANE_GOOGLE_TOKEN_URL: google.tokenUrl,
    BASEPLANE_GOOGLE_CERTS_URL: google.certsUrl,
    BASEPLANE_GOOGLE_ISSUER: google.issuer,
  })
  await configure(f, google)
  for (let i = 0; i < 2; i++) t.equal((await fetch(f.url('/callback?state=forged&code=x'), { redirect: 'manual' })).status, 303)
  const refused = await fetch(f.url(`/authorize?provider=google&redirect_to=${encodeURIComponent(APP)}`), { redirect: 'manual' })
  t.equal(refused.status, 429)
  t.equal(refused.headers.get('x-sb-error-code'), 'over_request_rate_limit')
})
