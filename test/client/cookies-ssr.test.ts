// baseplane/cookies against @supabase/ssr 0.12 itself, after real sign-ins on a
// running platform: what createServerClient writes the helper reads byte for
// byte, and the reverse; sessions that take several chunks; shrinking ones;
// and bad or missing cookies, which are no session and never a throw.
import t from 'tap'
import { createClient, type SupabaseClient } from '@supabase/supabase-js'
import * as ssr from '@supabase/ssr'
import { cookieMethods, cookieStorage, HeaderCookieJar, projectStorageKey, storageKeyFor, type CookieOptions } from '../../client/cookies.ts'
import { startTestPlatform } from '../helpers/platform.ts'

type Written = Array<{ name: string; value: string; options: ssr.CookieOptions }>

// @supabase/ssr and auth-js warn on the console about what these tests do on purpose; kept to assert on.
const warnings: string[] = []
const warn = console.warn
console.warn = (...args: unknown[]) => void warnings.push(String(args[0]))
t.teardown(() => {
  console.warn = warn
})

const platform = await startTestPlatform(t)
const project = await platform.createProject({ auth: true })
const KEY = storageKeyFor(project.baseUrl)
const PASSWORD = 'correct horse battery'
const BIG = 'big@example.test'
const SMALL = 'small@example.test'

const admin = createClient(project.baseUrl, project.serviceRoleKey, {
  auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
})
// Metadata travels twice in a session (the user, and the access token's claims): several cookies' worth.
const bigUser = await admin.auth.admin.createUser({ email: BIG, password: PASSWORD, email_confirm: true, user_metadata: { bio: 'Grüße aus Köln 🎉 '.repeat(100) } })
const smallUser = await admin.auth.admin.createUser({ email: SMALL, password: PASSWORD, email_confirm: true })
if (bigUser.error || smallUser.error) throw bigUser.error ?? smallUser.error

/** supabase-js in server code, its session in cookies through the helper. */
function helperClient(jar: HeaderCookieJar, options?: CookieOptions): SupabaseClient {
  return createClient(project.baseUrl, project.anonKey, {
    auth: { storage: cookieStorage(jar, options), flowType: 'pkce', autoRefreshToken: false, detectSessionInUrl: false, persistSession: true },
  })
}

/** @supabase/ssr's server client over a request's cookies, recording what it writes. */
function ssrClient(cookies: Array<{ name: string; value: string }>, written: Written, cookieOptions?: ssr.CookieOptionsWithName): SupabaseClient {
  return ssr.createServerClient(project.baseUrl, project.anonKey, {
    cookies: { getAll: () => cookies, setAll: (list) => void written.push(...list) },
    cookieOptions,
  }) as unknown as SupabaseClient
}

/** The Cookie header a browser sends back after these Set-Cookie headers (name=value, value as sent). */
const cookieHeaderOf = (setCookies: string[]) => setCookies.filter((h) => !/Max-Age=0(;|$)/.test(h)).map((h) => h.split(';')[0]).join('; ')
const serialized = (written: Written) => written.map(({ name, value, options }) => ssr.serializeCookieHeader(name, value, options))
/** What @supabase/ssr stored, decoded by hand (Buffer's base64url), not by either library. */
const decodedByHand = (values: string[]) => Buffer.from(values.join('').slice('base64-'.length), 'base64url').toString('utf8')

t.test('what createServerClient writes, the helper reads byte for byte', async (t) => {
  const written: Written = []
  const { data, error } = await ssrClient([], written).auth.signInWithPassword({ email: BIG, password: PASSWORD })
  t.error(error)
  t.ok(written.length >= 3, `${written.length} chunks`)
  t.same(written.map(({ name }) => name), written.map((_, i) => `${KEY}.${i}`))
  t.match(written[0]!.value, /^base64-/)
  const stored = decodedByHand(written.map(({ value }) => value))
  t.equal(JSON.parse(stored).access_token, data.session!.access_token)

  const jar = new HeaderCookieJar(cookieHeaderOf(serialized(written)))
  t.equal(cookieStorage(jar).getItem(KEY), stored, 'the very string auth-js stored')
  const client = helperClient(jar)
  const session = await client.auth.getSession()
  t.error(session.error)
  t.equal(session.data.session?.access_token, data.session!.access_token)
  const user = await client.auth.getUser()
  t.error(user.error)
  t.equal(user.data.user?.id, bigUser.data.user!.id)
  t.same(jar.setCookieHeaders(), [], 'reading writes no cookie')

  const again = new HeaderCookieJar()
  cookieStorage(again).setItem(KEY, stored)
  t.same(again.setCookieHeaders(), serialized(written), 'the same value makes the same Set-Cookie bytes')
})

t.test('what the helper writes, createServerClient reads byte for byte', async (t) => {
  const jar = new HeaderCookieJar()
  const { data, error } = await helperClient(jar, { domain: 'parent.test', secure: true }).auth.signInWithPassword({ email: BIG, password: PASSWORD })
  t.error(error)
  const setCookies = jar.setCookieHeaders()
  t.ok(setCookies.length >= 3, `${setCookies.length} chunks`)
  for (const header of setCookies) t.match(header, /^sb-127-auth-token\.\d+=[A-Za-z0-9_-]+; Max-Age=34560000; Domain=parent\.test; Path=\/; Secure; SameSite=Lax$/)
  const stored = cookieStorage(jar).getItem(KEY)!
  t.equal(decodedByHand(jar.getAll().map(({ value }) => value)), stored)

  const written: Written = []
  const server = ssrClient(ssr.parseCookieHeader(cookieHeaderOf(setCookies)) as Array<{ name: string; value: string }>, written, { domain: 'parent.test', secure: true })
  const session = await server.auth.getSession()
  t.error(session.error)
  t.equal(session.data.session?.access_token, data.session!.access_token)
  t.equal(JSON.stringify(session.data.session), stored, 'auth-js reads back the very string the helper stored')
  const user = await server.auth.getUser()
  t.error(user.error)
  t.equal(user.data.user?.id, bigUser.data.user!.id)
  t.same(written, [], 'nothing to rewrite')

  // @supabase/ssr writing the same value with the same options: the same bytes.
  const ssrWritten: Written = []
  await ssr.createServerClient(project.baseUrl, project.anonKey, {
    cookies: { getAll: () => [], setAll: (list) => void ssrWritten.push(...list) },
    cookieOptions: { domain: 'parent.test', secure: true },
  }).auth.setSession({ access_token: data.session!.access_token, refresh_token: data.session!.refresh_token }).catch(() => undefined)
  t.ok(ssrWritten.length > 0)
  const sameValue = new HeaderCookieJar()
  const ssrStored = decodedByHand(ssrWritten.map(({ value }) => value))
  cookieStorage(sameValue, { domain: 'parent.test', secure: true }).setItem(KEY, ssrStored)
  t.same(sameValue.setCookieHeaders(), serialized(ssrWritten))
})

t.test('a session that shrinks: stale chunks go, the same way @supabase/ssr removes them', async (t) => {
  const big = new HeaderCookieJar()
  t.error((await helperClient(big).auth.signInWithPassword({ email: BIG, password: PASSWORD })).error)
  const bigHeader = cookieHeaderOf(big.setCookieHeaders())
  const chunks = big.getAll().map(({ name }) => name)
  t.ok(chunks.length >= 3)

  // @supabase/ssr, through the helper's cookie methods: signing in as someone with a smaller session.
  const viaSsr = new HeaderCookieJar(bigHeader)
  const server = ssr.createServerClient(project.baseUrl, project.anonKey, {
    cookies: cookieMethods(viaSsr),
    cookieOptions: { domain: 'parent.test' },
  })
  t.error((await server.auth.signInWithPassword({ email: SMALL, password: PASSWORD })).error)
  t.same(viaSsr.getAll().map(({ name }) => name), [KEY], 'one cookie left')
  const removedBySsr = viaSsr.setCookieHeaders().filter((h) => h.includes('Max-Age=0'))
  t.equal(removedBySsr.length, chunks.length * 2, 'each chunk expired on the parent domain and host-only')
  const user = await helperClient(new HeaderCookieJar(cookieHeaderOf(viaSsr.setCookieHeaders()))).auth.getUser()
  t.error(user.error)
  t.equal(user.data.user?.email, SMALL, 'the helper reads the shrunk session')

  // The helper, from the same big cookies, writing the value @supabase/ssr wrote: the same Set-Cookie bytes.
  const smallValue = cookieStorage(viaSsr).getItem(KEY)!
  const viaHelper = new HeaderCookieJar(bigHeader)
  cookieStorage(viaHelper, { domain: 'parent.test' }).setItem(KEY, smallValue)
  t.same(viaHelper.setCookieHeaders(), viaSsr.setCookieHeaders())

  // And a real sign-in over the big cookies through the helper; @supabase/ssr reads the result.
  const signedIn = new HeaderCookieJar(bigHeader)
  t.error((await helperClient(signedIn).auth.signInWithPassword({ email: SMALL, password: PASSWORD })).error)
  t.same(signedIn.getAll().map(({ name }) => name), [KEY])
  t.same(signedIn.setCookieHeaders().filter((h) => h.includes('Max-Age=0')).map((h) => h.split('=')[0]), chunks)
  const read = await ssrClient(signedIn.getAll(), []).auth.getUser()
  t.error(read.error)
  t.equal(read.data.user?.email, SMALL)

  // Growing again replaces the one cookie with chunks; signing out expires them all.
  const grown = new HeaderCookieJar(cookieHeaderOf(signedIn.setCookieHeaders()))
  const client = helperClient(grown)
  t.error((await client.auth.signInWithPassword({ email: BIG, password: PASSWORD })).error)
  t.same(grown.getAll().map(({ name }) => name), chunks)
  t.equal(grown.setCookieHeaders()[0], `${KEY}=; Max-Age=0; Path=/; SameSite=Lax`)
  t.error((await client.auth.signOut()).error)
  t.same(grown.getAll(), [], 'signed out: no cookie left')
})

t.test('bad or missing cookies: no session, no throw, as in @supabase/ssr', async (t) => {
  const good = new HeaderCookieJar()
  const { data, error } = await helperClient(good).auth.signInWithPassword({ email: SMALL, password: PASSWORD })
  t.error(error)
  const goodValue = good.getAll()[0]!.value
  const raw = JSON.stringify(data.session)
  const cases: Array<[string, string]> = [
    ['no cookie', ''],
    ['other cookies only', 'theme=dark; sb-other-auth-token=base64-e30'],
    ['empty', `${KEY}=`],
    ['not base64url', `${KEY}=base64-%25%25%25`],
    ['not JSON', `${KEY}=base64-${Buffer.from('hello').toString('base64url')}`],
    ['cut short', `${KEY}=${goodValue.slice(0, 60)}`],
    ['a lone second chunk', `${KEY}.1=${goodValue}`],
    ['JSON that is not a session', `${KEY}=base64-${Buffer.from('{"access_token":1}').toString('base64url')}`],
    ['a mangled header', ';;; =; %E0%A4%A; ==='],
  ]
  for (const [what, header] of cases) {
    const client = helperClient(new HeaderCookieJar(header))
    const session = await client.auth.getSession()
    t.error(session.error, what)
    t.equal(session.data.session, null, what)
    const user = await client.auth.getUser()
    t.equal(user.data.user, null, what)
    t.equal(user.error?.name, 'AuthSessionMissingError', what)
    const bySsr = await ssrClient(ssr.parseCookieHeader(header) as Array<{ name: string; value: string }>, []).auth.getSession()
    t.equal(bySsr.data.session, null, `${what}: @supabase/ssr agrees`)
  }

  t.ok(warnings.some((w) => w.startsWith('@supabase/ssr: chunked cookie decoded to invalid JSON')), '@supabase/ssr saw the bad values as absent')

  // The legacy unprefixed JSON still signs in, for both.
  const legacy = `${KEY}=${encodeURIComponent(raw)}`
  const user = await helperClient(new HeaderCookieJar(legacy)).auth.getUser()
  t.error(user.error)
  t.equal(user.data.user?.email, SMALL)
  const bySsr = await ssrClient(ssr.parseCookieHeader(legacy) as Array<{ name: string; value: string }>, []).auth.getUser()
  t.error(bySsr.error)
  t.equal(bySsr.data.user?.email, SMALL)
})

t.test('the PKCE verifier is a cookie too', async (t) => {
  const jar = new HeaderCookieJar()
  const { error } = await helperClient(jar).auth.signUp({ email: 'new@example.test', password: PASSWORD })
  t.error(error)
  const verifier = jar.getAll().find(({ name }) => name.startsWith(`${KEY}-`) && name.endsWith('-code-verifier'))
  t.ok(verifier, `cookies: ${jar.getAll().map(({ name }) => name).join(', ')}`)
  t.match(verifier!.value, /^base64-/)
})

t.test('two projects on one host under path routing keep their sessions apart with projectStorageKey', async (t) => {
  const other = await platform.createProject({ auth: true, name: 'other project' })
  const otherAdmin = createClient(other.baseUrl, other.serviceRoleKey, { auth: { persistSession: false, autoRefreshToken: false } })
  const made = await otherAdmin.auth.admin.createUser({ email: 'other@example.test', password: PASSWORD, email_confirm: true })
  t.error(made.error)
  t.equal(storageKeyFor(project.baseUrl), storageKeyFor(other.baseUrl), "supabase-js's default key is the host's, the same for both")
  t.not(projectStorageKey(project.baseUrl), projectStorageKey(other.baseUrl), 'the project key differs')
  t.equal(projectStorageKey(other.baseUrl), `sb-${other.ref}-auth-token`)
  t.equal(projectStorageKey('https://abc123.example.com'), 'sb-abc123-auth-token', "under subdomain routing it is supabase-js's default")

  // One browser's cookies, shared by both projects' server clients.
  let cookies: Array<{ name: string; value: string }> = []
  const clientOf = (target: { baseUrl: string; anonKey: string }) =>
    ssr.createServerClient(target.baseUrl, target.anonKey, {
      cookieOptions: { name: projectStorageKey(target.baseUrl) },
      cookies: {
        getAll: () => cookies,
        setAll: (list) => {
          const names = new Set(list.map(({ name }) => name))
          cookies = [...cookies.filter(({ name }) => !names.has(name)), ...list.filter(({ value }) => value !== '').map(({ name, value }) => ({ name, value }))]
        },
      },
    }) as unknown as SupabaseClient
  t.error((await clientOf(project).auth.signInWithPassword({ email: SMALL, password: PASSWORD })).error)
  t.error((await clientOf(other).auth.signInWithPassword({ email: 'other@example.test', password: PASSWORD })).error)
  const first = await clientOf(project).auth.getUser()
  const second = await clientOf(other).auth.getUser()
  t.error(first.error)
  t.error(second.error)
  t.equal(first.data.user?.email, SMALL, 'the first project keeps its user')
  t.equal(second.data.user?.email, 'other@example.test', 'and the second its own')
})
