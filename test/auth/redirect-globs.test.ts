// Redirect allow-list globs (issue 15 item 3): GoTrue's gobwas/glob syntax
// with '.' and '/' as separators, matched on the whole address without its
// fragment. The matcher against GoTrue's documented examples (those that
// must match and those that must not), the site URL rule, patterns checked
// on save, and the refusal of addresses off the list through supabase-js.
import t from 'tap'
import { setRedirects } from '../../control-plane/auth-settings.ts'
import { globExample, globMatches, globSyntaxProblem, isAllowedRedirect } from '../../workers/auth/redirects.ts'
import { applyDefaults } from '../../workers/auth/settings.ts'
import { authFixture, call, linkOf } from './helpers.ts'

// [pattern, matches, does not match] (reference/auth-clients.md §1; † in GoTrue's own tests or docs)
const EXAMPLES: Array<[string, string[], string[]]> = [
  ['http://localhost:3000', ['http://localhost:3000'], ['http://localhost:3000/', 'http://localhost:3000/docs']],
  ['http://localhost:3000/*', ['http://localhost:3000/foo', 'http://localhost:3000/foo?x=1'], ['http://localhost:3000/foo/bar', 'http://localhost:3000/foo/', 'http://localhost:3000/cb?next=/x', 'http://localhost:3000/a.html']],
  ['http://localhost:3000/**', ['http://localhost:3000/', 'http://localhost:3000/foo/bar', 'http://localhost:3000/cb?next=/a.b'], ['http://localhost:3000']],
  ['http://localhost:*/**', ['http://localhost:3000/', 'http://localhost:5173/auth/callback?x=1'], ['http://localhost:3000', 'http://localhost:3000.evil.com/']],
  ['http://*.test.dev:3000', ['http://sub.test.dev:3000'], ['http://a.b.test.dev:3000']],
  ['http://*.*.dev:3000', ['http://foo.bar.dev:3000'], []],
  ['http://*.dev:3000', [], ['http://foo.bar.dev:3000']],
  ['http://test.dev:3000/*/*', ['http://test.dev:3000/bar/foo'], ['http://test.dev:3000/bar']],
  ['https://*.example.com/**', ['https://app.example.com/', 'https://app.example.com/cb?x=.y'], ['https://evil.com/?x=.example.com', 'https://a.b.example.com/', 'https://example.com/']],
  ['https://*.example.com', ['https://a.example.com'], ['https://a.b.example.com']],
  ['https://*-team.vercel.app/**', ['https://proj-git-x-team.vercel.app/cb'], ['https://a.b-team.vercel.app/']],
  ['com.example.app://**', ['com.example.app://sign-in/v2', 'com.example.app://'], []],
  ['twitter://timeline', ['twitter://timeline'], []],
  ['http://localhost:3000/?', ['http://localhost:3000/a'], ['http://localhost:3000/foo', 'http://localhost:3000/.']],
  ['http://localhost:3000/[!a-z]', ['http://localhost:3000/1'], ['http://localhost:3000/a']],
  ['http://localhost:3000/[a-c]', ['http://localhost:3000/b'], ['http://localhost:3000/d']],
  ['https://{app,admin}.example.com/**', ['https://app.example.com/x', 'https://admin.example.com/'], ['https://api.example.com/']],
  ['https://{*.preview,www}.example.com/', ['https://pr-1.preview.example.com/', 'https://www.example.com/'], ['https://a.b.preview.example.com/']],
  ['https://app.example.com/a\\*b', ['https://app.example.com/a*b'], ['https://app.example.com/axb']],
]

t.test('the matcher: GoTrue\'s examples', async (t) => {
  for (const [pattern, yes, no] of EXAMPLES) {
    t.equal(globSyntaxProblem(pattern), undefined, `${pattern} compiles`)
    for (const address of yes) t.ok(globMatches(pattern, address), `${pattern} matches ${address}`)
    for (const address of no) t.notOk(globMatches(pattern, address), `${pattern} does not match ${address}`)
  }
})

t.test('the allow list and the site URL rule', async (t) => {
  const settings = applyDefaults({ site_url: 'http://localhost:3000', additional_redirect_urls: ['http://*.example.com/*', 'https://*.example.com/**', 'http://localhost:*/**', 'com.example.app://**'] })
  const cases: Array<[string, boolean]> = [
    ['http://localhost:3000/anything/at/all', true], // the site URL's host
    ['http://localhost:8080/callback', true], // loopback: any port
    ['http://localhost/callback', true],
    ['https://localhost:3000/', false], // another scheme
    ['http://a.example.com/abc', true],
    ['http://a.example.com/abc#/fragment/ok', true], // the fragment is cut before matching
    ['http://something#.example.com/abc', false],
    ['http://japanese。.example.com/abc', false], // an unusual host as written
    ['http://under_score.example.com/abc', false],
    ['http://-dash.example.com/abc', false],
    ['https://evil.com/?x=.example.com', false],
    ['https://a.b.example.com/', false], // `*` in the host does not cross the '.'
    ['http://localhost:x@evil/', false], // a user name in the address
    ['https://user:pw@a.example.com/', false],
    ['http://2130706433/', false], // a decimal IP
    ['com.example.app://sign-in', true],
    ['not a url', false],
    ['', false],
  ]
  for (const [address, allowed] of cases) t.equal(isAllowedRedirect(settings, address), allowed, `${address || '(empty)'}: ${allowed ? 'allowed' : 'refused'}`)
  const site = applyDefaults({ site_url: 'https://example.com' })
  t.notOk(isAllowedRedirect(site, 'http://example.com/path'), 'site URL: scheme must match')
  t.notOk(isAllowedRedirect(site, 'https://example.com:8443/path'), 'site URL: port must match off loopback')
  t.ok(isAllowedRedirect(site, 'https://example.com/any/path?x=1'), 'site URL: any path')
})

t.test('pattern syntax', async (t) => {
  const bad: Array<[string, string]> = [
    ['http://localhost:3000/[a-', 'a [ is never closed by ]'],
    ['https://{a,b.example.com/', 'a { is never closed by }'],
    ['https://x.example.com/\\', 'the pattern ends with a lone \\'],
    ['https://x.example.com/[z-a]', 'the range [z-a] is out of order'],
    ['https://x.example.com/[]', '[] holds no character'],
  ]
  for (const [pattern, message] of bad) {
    t.equal(globSyntaxProblem(pattern), message, pattern)
    t.notOk(globMatches(pattern, pattern), 'a broken pattern matches nothing')
  }
  t.equal(globExample('http://localhost:*/**'), 'http://localhost:1/1')
  t.equal(globExample('https://{app,admin}.example.com/[abc]?'), 'https://app.example.com/11')
})

t.test('over HTTP: patterns saved, checked on save, and applied', async (t) => {
  const f = await authFixture(t)
  const cp = f.test.platform.controlPlane
  const saved = await setRedirects(cp, f.project.ref, { allow: ['http://localhost:*/**', 'https://*.example.com/**', 'https://*-team.vercel.app/**'] })
  t.same(saved.additional_redirect_urls, ['http://localhost:*/**', 'https://*.example.com/**', 'https://*-team.vercel.app/**'])
  await t.rejects(setRedirects(cp, f.project.ref, { allow: ['https://{a,b.example.com/'] }), { code: 'invalid_argument', message: 'Allowed redirect URL "https://{a,b.example.com/" is not a valid pattern: a { is never closed by }' })
  await t.rejects(setRedirects(cp, f.project.ref, { allow: ['*.example.com'] }), { code: 'invalid_argument', message: /must be an absolute URL/ })
  t.same((await setRedirects(cp, f.project.ref, { allow: ['http://localhost:*/**', 'https://*.example.com/**', 'https://*-team.vercel.app/**'] })).additional_redirect_urls.length, 3, 'a refused save changed nothing')

  // The admin API adds and removes one entry at a time; removing one not on the list writes nothing.
  const redirects = (body: unknown) =>
    fetch(`${f.test.origin}/platform/v1/projects/${f.project.ref}/auth/redirects`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${f.test.config.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { additional_redirect_urls?: string[]; code?: string; message?: string } }))
  const added = await redirects({ add_redirect_urls: ['myapp://callback'] })
  t.same([added.status, added.body.additional_redirect_urls], [200, ['http://localhost:*/**', 'https://*.example.com/**', 'https://*-team.vercel.app/**', 'myapp://callback']])
  const missing = await redirects({ remove_redirect_urls: ['myapp://callback', 'https://never.example.test'] })
  t.same([missing.status, missing.body.code, missing.body.message], [400, 'invalid_argument', `"https://never.example.test" is not on the allow list of ${f.project.ref}`])
  const removed = await redirects({ remove_redirect_urls: ['myapp://callback'] })
  t.same([removed.status, removed.body.additional_redirect_urls], [200, ['http://localhost:*/**', 'https://*.example.com/**', 'https://*-team.vercel.app/**']], 'removed, once the refused change wrote nothing')
  t.same((await redirects({ add_redirect_urls: 'myapp://x' })).body, { code: 'invalid_argument', message: '"add_redirect_urls" must be a list of URLs' })

  const supabase = f.anon()
  const email = 'globs@example.test'
  for (const to of ['http://localhost:5173/auth/callback', 'https://app.example.com/welcome', 'https://proj-git-main-team.vercel.app/done']) {
    const since = f.mail.messages.length
    const sent = await supabase.auth.signInWithOtp({ email, options: { emailRedirectTo: to } })
    t.error(sent.error, to)
    const link = linkOf(await f.mail.next(email, since))
    t.equal(new URL(link).searchParams.get('redirect_to'), to, `the link returns to ${to}`)
    const landed = (await fetch(link, { redirect: 'manual' })).headers.get('location')!
    t.ok(landed.startsWith(`${to}#access_token=`), `landed on ${to}`)
  }
  for (const to of ['https://evil.com/?x=.example.com', 'https://a.b.example.com/', 'http://localhost:3000.evil.com/', 'https://a.b-team.vercel.app/']) {
    const refused = await supabase.auth.signInWithOtp({ email, options: { emailRedirectTo: to } })
    t.equal(refused.error?.status, 400, to)
    t.equal(refused.error?.code, 'validation_failed')
    t.match(refused.error?.message, `redirect_to "${to}" is not allowed`)
  }
  const verify = await call(f, 'GET', `/verify?type=magiclink&token=x&redirect_to=${encodeURIComponent('https://evil.com/?x=.example.com')}`)
  t.equal(verify.status, 400, 'GET /verify refuses it too')
})
