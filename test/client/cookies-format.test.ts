// baseplane/cookies without a server: the options' messages, the Cookie and
// Set-Cookie headers and the chunking against @supabase/ssr's own functions,
// stale chunks, decoding of bad values, and the package entry from plain node.
import { execFile } from 'node:child_process'
import t from 'tap'
import * as ssr from '@supabase/ssr'
import {
  browserCookieStorage, chunkCookies, combineChunks, cookieStorage, CookieError, decodeSessionValue, encodeSessionValue,
  HeaderCookieJar, isChunkOf, MAX_CHUNK_SIZE, parseCookieHeader, resolveCookieOptions, serializeCookie, storageKeyFor,
  type CookieAttributes, type CookieJar,
} from '../../client/cookies.ts'

const KEY = 'sb-127-auth-token'
/** A value auth-js could store: JSON, with non-ASCII text, `size` characters of metadata. */
const sessionJson = (size: number) => JSON.stringify({ access_token: 'a.b.c', refresh_token: 'r', user: { user_metadata: { bio: 'ünïcödé 🎉 '.repeat(size / 12) } } })

t.test('storage keys follow supabase-js: the first label of the project host', async (t) => {
  t.equal(storageKeyFor('https://abcd.supabase.co'), 'sb-abcd-auth-token')
  t.equal(storageKeyFor('http://127.0.0.1:8000/project/demo'), 'sb-127-auth-token')
  t.equal(storageKeyFor('http://localhost:54321'), 'sb-localhost-auth-token')
  t.equal(storageKeyFor('https://shop.parent.test'), 'sb-shop-auth-token')
  t.throws(() => storageKeyFor('not a url'), { code: 'invalid_supabase_url', message: 'not a URL: "not a url"' })
})

t.test('options: defaults as @supabase/ssr, and one exact message per mistake', async (t) => {
  t.same(resolveCookieOptions(), { path: '/', sameSite: 'lax', httpOnly: false, maxAge: 34560000 })
  t.same(resolveCookieOptions({ domain: 'parent.test', secure: true, sameSite: 'strict', path: '/app', maxAge: 3600 }), {
    path: '/app', sameSite: 'strict', httpOnly: false, maxAge: 3600, domain: 'parent.test', secure: true,
  })
  const cases: Array<[unknown, string]> = [
    [{ domian: 'parent.test' }, 'unknown cookie option "domian" (expected domain, path, secure, sameSite, maxAge, httpOnly)'],
    [{ domain: 'https://parent.test' }, 'cookie option domain must be a host name such as "example.com" (got "https://parent.test")'],
    [{ domain: 'parent.test:8000' }, 'cookie option domain must be a host name such as "example.com" (got "parent.test:8000")'],
    [{ path: 'app' }, 'cookie option path must start with "/" and hold no ";" or control characters (got "app")'],
    [{ path: '/a;b' }, 'cookie option path must start with "/" and hold no ";" or control characters (got "/a;b")'],
    [{ maxAge: 1.5 }, 'cookie option maxAge must be a whole number of seconds, 0 or more (got 1.5)'],
    [{ maxAge: -1 }, 'cookie option maxAge must be a whole number of seconds, 0 or more (got -1)'],
    [{ sameSite: 'loose' }, 'cookie option sameSite must be "lax", "strict" or "none" (got "loose")'],
    [{ secure: 'yes' }, 'cookie option secure must be true or false (got "yes")'],
    [{ httpOnly: 1 }, 'cookie option httpOnly must be true or false (got 1)'],
    [{ sameSite: 'none' }, 'cookie option sameSite "none" needs secure: true (browsers drop SameSite=None cookies without Secure)'],
    [null, 'cookie options must be an object'],
  ]
  for (const [options, message] of cases) {
    t.throws(() => resolveCookieOptions(options as never), { name: 'CookieError', code: 'invalid_cookie_option', message }, message)
    t.throws(() => cookieStorage(new HeaderCookieJar(), options as never), { code: 'invalid_cookie_option', message }, 'the storage checks them when made')
  }
  const error = new CookieError('invalid_cookie_option', 'x')
  t.same(JSON.parse(JSON.stringify(error)), { code: 'invalid_cookie_option', message: 'x' })
})

t.test('Set-Cookie headers are the bytes @supabase/ssr serializes', async (t) => {
  const cases: Array<[string, string, CookieAttributes]> = [
    [KEY, 'base64-eyJhIjoxfQ', { path: '/', sameSite: 'lax', httpOnly: false, maxAge: 34560000 }],
    [`${KEY}.0`, 'base64-eyJhIjoxfQ', { path: '/', sameSite: 'lax', httpOnly: false, maxAge: 34560000, domain: 'parent.test', secure: true }],
    [`${KEY}.1`, '', { path: '/', sameSite: 'lax', httpOnly: false, maxAge: 0, domain: '.parent.test' }],
    [KEY, '{"raw":"json; with spaces","é":1}', { path: '/app', sameSite: 'strict', httpOnly: true, maxAge: 60 }],
    ['x', 'y', { sameSite: true, priority: 'high', partitioned: true, secure: true, expires: new Date(0) }],
    ['x', 'y', { sameSite: 'none', secure: true }],
    ['x', 'y', {}],
  ]
  for (const [name, value, options] of cases) t.equal(serializeCookie(name, value, options), ssr.serializeCookieHeader(name, value, options))
  t.throws(() => serializeCookie('a b', 'v'), { code: 'invalid_cookie_name', message: 'cookie name "a b" is not a token (RFC 6265 4.1.1)' })
  t.throws(() => serializeCookie('a=b', 'v'), { code: 'invalid_cookie_name' })
  t.throws(() => serializeCookie('a', 'v', { domain: 'a b' }), { code: 'invalid_cookie_option' })
  t.throws(() => serializeCookie('a', 'v', { sameSite: 'loose' as never }), { code: 'invalid_cookie_option', message: 'cookie option sameSite must be one of lax, strict, none (got "loose")' })
})

t.test('Cookie headers parse as @supabase/ssr parses them, and bad ones do not throw', async (t) => {
  const headers = [
    `${KEY}.0=base64-abc; ${KEY}.1=def`,
    'a=1; a=2; b = 3 ;c=%7B%22x%22%3A1%7D',
    'bad=%E0%A4%A; ok=%20',
    ';;; =; novalue; =x; y=',
    '',
  ]
  // The one difference: `=x` is no cookie here (a name is at least one character), where the `cookie` package keeps a nameless one.
  for (const header of headers) t.same(parseCookieHeader(header), ssr.parseCookieHeader(header).filter(({ name }) => name !== ''), header)
  t.same(parseCookieHeader(undefined), [])
  t.same(parseCookieHeader(null), [])
})

t.test('chunks: the same cookies as @supabase/ssr, under the size limit, joined again', async (t) => {
  for (const size of [10, 3000, 9000, 20000]) {
    const value = sessionJson(size)
    for (const stored of [value, encodeSessionValue(value)]) {
      const ours = chunkCookies(KEY, stored)
      t.same(ours, ssr.createChunks(KEY, stored), `${size} characters, ${stored === value ? 'raw' : 'base64'}`)
      for (const { value: chunk } of ours) t.ok(encodeURIComponent(chunk).length <= MAX_CHUNK_SIZE)
      const byName = new Map(ours.map(({ name, value }) => [name, value]))
      t.equal(combineChunks(KEY, (name) => byName.get(name)), stored)
    }
  }
  t.equal(chunkCookies(KEY, encodeSessionValue(sessionJson(9000)))[0]!.value.startsWith('base64-'), true)
  t.equal(chunkCookies(KEY, encodeSessionValue(sessionJson(9000)))[1]!.value.startsWith('base64-'), false)
  t.ok(isChunkOf(`${KEY}.12`, KEY))
  t.notOk(isChunkOf(`${KEY}.01`, KEY), '.01 is not a chunk')
  t.notOk(isChunkOf(`${KEY}-code-verifier`, KEY))
  t.notOk(isChunkOf(`${KEY}.x`, KEY))
})

t.test('the base64- encoding is @supabase/ssr\'s, and what does not decode is no session', async (t) => {
  const value = sessionJson(500)
  t.equal(encodeSessionValue(value), `base64-${ssr.stringToBase64URL(value)}`)
  t.equal(decodeSessionValue(encodeSessionValue(value)), value)
  t.equal(decodeSessionValue(value), value, 'a legacy unprefixed value is read as it is')
  t.equal(decodeSessionValue('base64-!!!'), null, 'not base64url')
  t.equal(decodeSessionValue('base64-ab+/'), null, 'base64, not base64url')
  t.equal(decodeSessionValue(`base64-${Buffer.from('not json').toString('base64url')}`), null, 'not JSON')
  t.equal(decodeSessionValue(`base64-${Buffer.from([0x7b, 0xff, 0x7d]).toString('base64url')}`), null, 'not UTF-8')
  t.equal(decodeSessionValue('base64-a'), null, 'a truncated value')
})

t.test('the storage writes chunks, removes stale ones as a session shrinks and grows, and reads its own writes', async (t) => {
  const jar = new HeaderCookieJar()
  const storage = cookieStorage(jar, { domain: 'parent.test' })
  t.equal(storage.isServer, true)
  t.equal(storage.getItem(KEY), null)
  const big = sessionJson(9000)
  storage.setItem(KEY, big)
  const chunkNames = jar.getAll().map(({ name }) => name)
  t.ok(chunkNames.length >= 3, `${chunkNames.length} chunks`)
  t.same(chunkNames, chunkNames.map((_, i) => `${KEY}.${i}`))
  t.equal(storage.getItem(KEY), big)
  for (const header of jar.setCookieHeaders()) t.match(header, /; Max-Age=34560000; Domain=parent\.test; Path=\/; SameSite=Lax$/)

  // The next request carries those cookies; the session shrinks to one cookie.
  const next = new HeaderCookieJar(jar.getAll().map(({ name, value }) => `${name}=${value}`).join('; '))
  const small = sessionJson(10)
  cookieStorage(next, { domain: 'parent.test' }).setItem(KEY, small)
  const removals = chunkNames.flatMap((name) => [
    `${name}=; Max-Age=0; Domain=parent.test; Path=/; SameSite=Lax`,
    `${name}=; Max-Age=0; Path=/; SameSite=Lax`,
  ])
  t.same(next.setCookieHeaders().slice(0, -1).sort(), removals.sort(), 'each stale chunk expired on the parent domain and host-only')
  t.equal(next.setCookieHeaders().at(-1), `${KEY}=${encodeURIComponent(encodeSessionValue(small))}; Max-Age=34560000; Domain=parent.test; Path=/; SameSite=Lax`)
  t.same(next.getAll().map(({ name }) => name), [KEY])

  // And grows again: the unsuffixed cookie goes.
  const again = new HeaderCookieJar(`${KEY}=${encodeSessionValue(small)}; other=1`)
  const storage3 = cookieStorage(again)
  storage3.setItem(KEY, big)
  t.equal(again.setCookieHeaders()[0], `${KEY}=; Max-Age=0; Path=/; SameSite=Lax`)
  t.equal(storage3.getItem(KEY), big)
  storage3.removeItem(KEY)
  t.equal(storage3.getItem(KEY), null)
  t.same(again.getAll(), [{ name: 'other', value: '1' }], 'sign-out leaves other cookies alone')
})

t.test('a jar that cannot list its cookies: chunks are found by probing, reads see the writes', async (t) => {
  // Like Express: req.cookies never changes during the request; res.cookie writes.
  const request: Record<string, string> = {}
  for (const { name, value } of chunkCookies(KEY, encodeSessionValue(sessionJson(9000)))) request[name] = value
  const written: string[] = []
  const jar: CookieJar = {
    get: (name) => request[name],
    set: (name, value, options) => void written.push(serializeCookie(name, value, options)),
    remove: (name, options) => void written.push(serializeCookie(name, '', options)),
  }
  const storage = cookieStorage(jar)
  t.equal(storage.getItem(KEY), sessionJson(9000))
  storage.setItem(KEY, sessionJson(10))
  t.equal(storage.getItem(KEY), sessionJson(10), 'the new value, though the request still has the old one')
  t.same(written.filter((w) => w.includes('Max-Age=0')).map((w) => w.split('=')[0]), Object.keys(request))
  storage.removeItem(KEY)
  t.equal(storage.getItem(KEY), null)
})

t.test('bad cookies are no session, never a throw', async (t) => {
  const read = (header: string) => cookieStorage(new HeaderCookieJar(header)).getItem(KEY)
  const [first, second] = chunkCookies(KEY, encodeSessionValue(sessionJson(9000)))
  const otherLast = chunkCookies(KEY, encodeSessionValue(sessionJson(5000))).at(-1)!
  t.equal(read(''), null)
  t.equal(read(`${KEY}=base64-%%%`), null)
  t.equal(read(`${KEY}=`), null)
  t.equal(read(`${KEY}.1=${second!.value}`), null, 'a chunk without .0')
  t.equal(read(`${KEY}.0=${first!.value}`), null, 'a missing last chunk')
  t.equal(read(`${KEY}.0=${first!.value}; ${KEY}.1=${otherLast.value}`), null, 'chunks of two different writes')
  t.equal(read(`${KEY}=${encodeURIComponent('{"legacy":true}')}`), '{"legacy":true}', 'the legacy raw JSON')
  t.equal(read(`${KEY}=${encodeSessionValue('{"whole":1}')}; ${KEY}.0=${first!.value}`), '{"whole":1}', 'the unsuffixed cookie wins over chunks')
})

t.test('the browser storage needs a document', async (t) => {
  t.throws(() => browserCookieStorage(), { code: 'no_document', message: /there is no document\.cookie here/ })
})

t.test('plain node imports baseplane/cookies (the built package, no TypeScript loader)', async (t) => {
  const script = `
    import { storageKeyFor, cookieStorage, HeaderCookieJar } from 'baseplane/cookies'
    const jar = new HeaderCookieJar()
    cookieStorage(jar).setItem(storageKeyFor('https://abc.example.com'), '{"a":1}')
    console.log(jar.setCookieHeaders()[0])
  `
  const output: string = await new Promise((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd(), env: { PATH: process.env.PATH } }, (error, stdout, stderr) =>
      error ? reject(new Error(stderr || error.message)) : resolve(stdout),
    )
  })
  t.equal(output.trim(), 'sb-abc-auth-token=base64-eyJhIjoxfQ; Max-Age=34560000; Path=/; SameSite=Lax')
})
