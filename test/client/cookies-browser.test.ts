// One sign-in for every subdomain of a parent, in headless Chromium: a small
// node:http app answers on a.parent.test and b.parent.test (host resolver
// rules to loopback) and keeps the session in cookies on Domain=parent.test,
// through baseplane/cookies on the server and through its browser build
// (served from the package's dist/, no CDN) over document.cookie.
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { createClient } from '@supabase/supabase-js'
import { cookieStorage, HeaderCookieJar, NO_STORE_HEADERS, storageKeyFor } from '../../client/cookies.ts'
import { freePort } from '../../lib/db/embedded.ts'
import { startTestPlatform, type TestProject } from '../helpers/platform.ts'

const PARENT = 'parent.test'
const PASSWORD = 'correct horse battery'

const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
if (fs.existsSync(executablePath)) await browserTests(executablePath)
else t.plan(0, `no Chromium at ${executablePath} (install chromium or set CHROMIUM_PATH): the cross-subdomain cookie tests are skipped`)

async function browserTests(executablePath: string): Promise<void> {
  const platform = await startTestPlatform(t)
  const project = await platform.createProject({ auth: true })
  const admin = createClient(project.baseUrl, project.serviceRoleKey, {
    auth: { persistSession: false, autoRefreshToken: false },
  })
  for (const [email, metadata] of [['big@example.test', { bio: 'Grüße 🎉 '.repeat(300) }], ['small@example.test', {}]] as const) {
    const { error } = await admin.auth.admin.createUser({ email, password: PASSWORD, email_confirm: true, user_metadata: metadata })
    if (error) throw error
  }
  const port = await freePort()
  const app = testApp(project)
  await new Promise<void>((resolve) => app.listen(port, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => app.close(() => resolve())))

  const browser = await chromium.launch({
    executablePath,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run',
      '--host-resolver-rules=MAP *.parent.test 127.0.0.1, MAP elsewhere.test 127.0.0.1',
    ],
  })
  t.teardown(() => browser.close())
  const context: BrowserContext = await browser.newContext()
  const page: Page = await context.newPage()
  const at = (host: string, path = '/') => `http://${host}:${port}${path}`
  const who = async (url: string) => {
    await page.goto(url)
    await page.waitForFunction(() => document.querySelector('#who')?.textContent !== 'loading')
    return page.locator('#who').innerText()
  }
  const KEY = storageKeyFor(project.baseUrl)
  const sessionCookies = async () => (await context.cookies()).filter((c) => c.name === KEY || c.name.startsWith(`${KEY}.`))

  t.test('signed in by the server on a.parent.test, signed in on b.parent.test', async (t) => {
    t.equal(await who(at(`a.${PARENT}`)), 'signed out')
    await page.fill('#email', 'big@example.test')
    await page.fill('#password', PASSWORD)
    await page.click('button:has-text("Sign in")')
    t.equal(await page.locator('#who').innerText(), 'signed in as big@example.test')
    const cookies = await sessionCookies()
    t.ok(cookies.length >= 3, `the session took ${cookies.length} chunks`)
    t.same(cookies.map((c) => c.name).sort(), cookies.map((_, i) => `${KEY}.${i}`).sort())
    for (const cookie of cookies) t.match(cookie, { domain: `.${PARENT}`, path: '/', sameSite: 'Lax', httpOnly: false, secure: false })

    t.equal(await who(at(`b.${PARENT}`)), 'signed in as big@example.test', 'the server on the sibling reads it')
    t.equal(await who(at(`b.${PARENT}`, '/browser')), 'signed in as big@example.test', 'and so does the browser build over document.cookie')
    t.equal(await who(at('elsewhere.test')), 'signed out', 'a site outside the parent gets no cookie')
  })

  t.test('signed in by the browser on b.parent.test (a smaller session), signed in on a.parent.test', async (t) => {
    await who(at(`b.${PARENT}`, '/browser'))
    const signIn = await page.evaluate(async (password) => {
      const { error } = await (window as unknown as BrowserApp).client.auth.signInWithPassword({ email: 'small@example.test', password })
      return error?.message ?? null
    }, PASSWORD)
    t.equal(signIn, null)
    const cookies = await sessionCookies()
    t.same(cookies.map((c) => c.name), [KEY], 'the stale chunks of the bigger session are gone')
    t.match(cookies[0], { domain: `.${PARENT}`, value: /^base64-/ })
    t.equal(await who(at(`a.${PARENT}`)), 'signed in as small@example.test')
    t.equal(await who(at(`a.${PARENT}`, '/browser')), 'signed in as small@example.test')
  })

  t.test('signed out on a.parent.test, signed out on b.parent.test', async (t) => {
    await who(at(`a.${PARENT}`, '/browser'))
    const signOut = await page.evaluate(async () => (await (window as unknown as BrowserApp).client.auth.signOut()).error?.message ?? null)
    t.equal(signOut, null)
    t.same(await sessionCookies(), [])
    t.equal(await who(at(`b.${PARENT}`)), 'signed out')
    t.equal(await who(at(`b.${PARENT}`, '/browser')), 'signed out')
  })
}

interface BrowserApp {
  client: ReturnType<typeof createClient>
}

/** The app: server-rendered pages that use the helper in server code, and a page that uses its browser build. */
function testApp(project: TestProject): http.Server {
  const options = { domain: PARENT }
  const packageDir = path.dirname(fileURLToPath(import.meta.resolve('baseplane/cookies')))
  // supabase-js's own browser build, beside its ESM entry (dist/index.mjs).
  const umd = fileURLToPath(new URL('umd/supabase.js', import.meta.resolve('@supabase/supabase-js')))
  const serverClient = (jar: HeaderCookieJar) =>
    createClient(project.baseUrl, project.anonKey, {
      auth: { storage: cookieStorage(jar, options), flowType: 'pkce', autoRefreshToken: false, detectSessionInUrl: false, persistSession: true },
    })
  const send = (res: http.ServerResponse, type: string, body: string | Buffer) => {
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' })
    res.end(body)
  }
  const page = (body: string) => `<!doctype html><html><head><meta charset="utf-8"><title>app</title></head><body>${body}</body></html>`

  return http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://app')
    try {
      if (req.method === 'POST' && url.pathname === '/sign-in') {
        const form = new URLSearchParams(await readBody(req))
        const jar = new HeaderCookieJar(req.headers.cookie)
        const { error } = await serverClient(jar).auth.signInWithPassword({ email: form.get('email') ?? '', password: form.get('password') ?? '' })
        if (error) throw error
        res.writeHead(303, { location: '/', 'set-cookie': jar.setCookieHeaders(), ...NO_STORE_HEADERS })
        res.end()
      } else if (url.pathname === '/') {
        const { data, error } = await serverClient(new HeaderCookieJar(req.headers.cookie)).auth.getUser()
        const who = error ? 'signed out' : `signed in as ${data.user.email}`
        send(res, 'text/html', page(`<p id="who">${who}</p>
          <form method="post" action="/sign-in"><input id="email" name="email"><input id="password" name="password" type="password"><button>Sign in</button></form>`))
      } else if (url.pathname === '/browser') {
        send(res, 'text/html', page(`<p id="who">loading</p>
          <script src="/vendor/supabase.js"></script>
          <script type="module">
            import { browserCookieStorage } from '/pkg/cookies.js'
            const client = window.supabase.createClient(${JSON.stringify(project.baseUrl)}, ${JSON.stringify(project.anonKey)}, {
              auth: { storage: browserCookieStorage(${JSON.stringify(options)}), autoRefreshToken: false },
            })
            window.client = client
            const { data, error } = await client.auth.getUser()
            document.querySelector('#who').textContent = error ? 'signed out' : 'signed in as ' + data.user.email
          </script>`))
      } else if (url.pathname === '/vendor/supabase.js') {
        send(res, 'text/javascript', fs.readFileSync(umd))
      } else if (/^\/pkg\/[a-z-]+\.js$/.test(url.pathname)) {
        send(res, 'text/javascript', fs.readFileSync(path.join(packageDir, url.pathname.slice('/pkg/'.length))))
      } else {
        res.writeHead(404).end()
      }
    } catch (error) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error))
    }
  })
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
