// Exact JWT forms (issue 36 item 9): a compact JWS whose parts are not exactly
// base64url (a `=` appended to the signature, which jose's decoder tolerated
// for HS256) and an access token without `exp` signed with the project's own
// secret or key are refused by every service, each in its own shape; the
// project's anon and service_role keys (which carry a ten-year `exp`) and a
// real session's access token still pass.
import pg from 'pg'
import t from 'tap'
import { createClient } from '@supabase/supabase-js'
import { setAuthOptions } from '../../control-plane/auth-settings.ts'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { signJwt, signWithKey } from '../../lib/jwt.ts'
import { request, type Reply } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const platform = await startTestPlatform(t)
const project = await platform.createProject({ name: 'Forms', auth: true, push: true })
await setAuthOptions(platform.platform.controlPlane, project.ref, { mailer_autoconfirm: true })
const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
await owner.connect()
await owner.query(`create table public.notes (id int primary key, body text not null);
                   insert into public.notes values (1, 'readable');
                   grant select on public.notes to anon, authenticated, service_role`)
await owner.end()

const now = () => Math.floor(Date.now() / 1000)
const userClaims = () => ({ sub: '00000000-0000-4000-8000-0000000000aa', role: 'authenticated', aud: 'authenticated', iat: now() })

/** One request per service with `token` as the Bearer (the apikey is the anon key). */
async function everyService(token: string, apikey = project.anonKey): Promise<Record<string, Reply>> {
  const headers = { apikey, authorization: `Bearer ${token}` }
  return {
    auth: await request(`${project.baseUrl}/auth/v1/user`, { headers: { ...headers, 'x-supabase-api-version': '2024-01-01' } }),
    rest: await request(`${project.baseUrl}/rest/v1/notes?select=body`, { headers }),
    graphql: await request(`${project.baseUrl}/graphql/v1`, { headers, body: { query: '{ __typename }' } }),
    push: await request(`${project.baseUrl}/push/v1/devices`, { headers }),
  }
}

/** What each service answers a token it refuses for `reason`: GoTrue's 403, the others' 401 in their own shapes. */
function refusals(reason: string) {
  return {
    auth: { status: 403, header: 'bad_jwt', body: { code: 'bad_jwt', message: `invalid JWT: unable to parse or verify signature, ${reason}` } },
    rest: { status: 401, header: 'bad_jwt', body: { code: 'bad_jwt', details: null, hint: null, message: `Invalid JWT: ${reason}` } },
    graphql: { status: 401, header: 'bad_jwt', body: { code: 'bad_jwt', message: `Invalid JWT: ${reason}` } },
    push: { status: 401, header: 'bad_jwt', body: { code: 'bad_jwt', message: `Invalid JWT: ${reason}` } },
  }
}

const seen = (replies: Record<string, Reply>) =>
  Object.fromEntries(Object.entries(replies).map(([service, reply]) => [service, { status: reply.status, header: reply.headers['x-sb-error-code'], body: reply.json }]))

t.test('a signature with base64 padding is refused, HS256 and ES256 alike, by every service', async (t) => {
  const claims = { ...userClaims(), exp: now() + 600 }
  const hs256 = signJwt(project.record.jwtSecret, claims)
  const es256 = signWithKey(project.record.signingKeys[0]!, claims)
  for (const [name, token] of [['HS256', hs256], ['ES256', es256]] as const) {
    t.same(seen(await everyService(`${token}=`)), refusals('unable to parse token'), `${name} with "=" appended to its signature`)
    t.same(seen(await everyService(`${token}==`)), refusals('unable to parse token'), `${name} with "==" appended`)
    const [header, payload, signature] = token.split('.')
    t.same(seen(await everyService(`${header}=.${payload}.${signature}`)), refusals('unable to parse token'), `${name} with a padded header`)
    const standard = `${header}.${payload}.${Buffer.from(signature!, 'base64url').toString('base64').replace(/=+$/, '')}`
    if (standard !== token) t.same(seen(await everyService(standard)), refusals('unable to parse token'), `${name} with its signature in standard base64`)
  }
  t.same(seen(await everyService(`${project.anonKey}=`, project.anonKey)), refusals('unable to parse token'), 'the anon key with "=" appended, as the Bearer')
  const keyPadded = await request(`${project.baseUrl}/graphql/v1`, { headers: { apikey: `${project.anonKey}=` }, body: { query: '{ __typename }' } })
  t.same({ status: keyPadded.status, code: (keyPadded.json as { code?: string }).code }, { status: 401, code: 'invalid_api_key' }, 'and as the apikey: not the key')
  const exact = await everyService(hs256)
  t.same(Object.values(exact).map((reply) => reply.status), [403, 200, 200, 200], 'the same token unpadded passes the gate (Auth: no such user)')
})

t.test("a token without exp is refused even when signed with the project's own secret or key", async (t) => {
  const hs256 = signJwt(project.record.jwtSecret, userClaims())
  const es256 = signWithKey(project.record.signingKeys[0]!, userClaims())
  const serviceRole = signJwt(project.record.jwtSecret, { iss: 'baseplane', ref: project.ref, role: 'service_role', iat: now() })
  const reason = 'token is missing required claim: exp claim is required'
  t.same(seen(await everyService(hs256)), refusals(reason), 'HS256, the legacy secret')
  t.same(seen(await everyService(es256)), refusals(reason), "ES256, the project's signing key")
  t.same(seen(await everyService(serviceRole)), refusals(reason), 'a service_role token made like the key, without its exp')
  const notNumber = signJwt(project.record.jwtSecret, { ...userClaims(), exp: String(now() + 600) })
  t.same(seen(await everyService(notNumber)), refusals('"exp" claim must be a number'), 'an exp that is not a number')
})

t.test('the anon and service_role keys and a real session still pass on every service', async (t) => {
  for (const key of [project.anonKey, project.serviceRoleKey]) {
    const role = key === project.anonKey ? 'anon' : 'service_role'
    const claims = JSON.parse(Buffer.from(key.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>
    t.ok(typeof claims.exp === 'number' && claims.exp > now() + 9 * 365 * 24 * 3600, `the ${role} key carries an exp about ten years out, as Supabase's do`)
    const replies = await everyService(key, key)
    t.same(
      Object.fromEntries(Object.entries(replies).map(([service, reply]) => [service, reply.status])),
      // Auth's /user wants a user's token (GoTrue: 403 bad_jwt, no sub); Push's devices are for users and service_role.
      { auth: 403, rest: 200, graphql: 200, push: role === 'anon' ? 403 : 200 },
      `the ${role} key as apikey and Bearer passes the gate`,
    )
    if (role === 'anon') t.equal(replies.push.headers['x-sb-error-code'], 'device_not_allowed', "Push's own refusal for anon, past the gate")
    t.equal(replies.auth.headers['x-sb-error-code'], 'bad_jwt', 'Auth refuses a key on /user as GoTrue does (no sub)')
    const alone = await request(`${project.baseUrl}/rest/v1/notes?select=body`, { headers: { apikey: key } })
    t.same({ status: alone.status, body: alone.json }, { status: 200, body: [{ body: 'readable' }] }, `the ${role} key alone reads through REST`)
  }

  const supabase = createClient(project.baseUrl, project.anonKey, { auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false } })
  const signUp = await supabase.auth.signUp({ email: 'forms@example.com', password: 'correct horse battery' })
  t.equal(signUp.error, null, 'sign-up succeeds')
  const signIn = await supabase.auth.signInWithPassword({ email: 'forms@example.com', password: 'correct horse battery' })
  t.equal(signIn.error, null, 'sign-in succeeds')
  const user = await supabase.auth.getUser()
  t.equal(user.error, null, 'Auth accepts the session')
  t.equal(user.data.user?.email, 'forms@example.com')
  const notes = await supabase.from('notes').select('body')
  t.equal(notes.error, null, 'REST accepts the session')
  t.same(notes.data, [{ body: 'readable' }])
  const token = signIn.data.session!.access_token
  const replies = await everyService(token)
  t.same(
    Object.fromEntries(Object.entries(replies).map(([service, reply]) => [service, reply.status])),
    { auth: 200, rest: 200, graphql: 200, push: 200 },
    'the access token passes on every service',
  )
})
