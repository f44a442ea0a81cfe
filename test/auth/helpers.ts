// Fixtures of the auth tests: a real SMTP server (smtp-server) that keeps
// what it receives, a platform whose mail goes to it, a project with auth on
// and its redirect settings, and the unmodified supabase-js client.
import { createClient, type SupabaseClient } from '@supabase/supabase-js'
import type pg from 'pg'
import { SMTPServer } from 'smtp-server'
import { setAuthOptions, setRedirects } from '../../control-plane/auth-settings.ts'
import { freePort } from '../../lib/db/embedded.ts'
import { adminQuery, serverUrl, withDatabase } from '../helpers/db.ts'
import { startTestPlatform, type TestPlatform, type TestProject } from '../helpers/platform.ts'

interface Teardown {
  teardown(fn: () => unknown): void
}

export interface ReceivedMail {
  to: string[]
  raw: string
  subject: string
  html: string
}

export interface MailCatcher {
  url: string
  messages: ReceivedMail[]
  /** Waits for the next mail to `to` (received after `since` messages). */
  next(to: string, since?: number): Promise<ReceivedMail>
}

function decodeQuotedPrintable(text: string): string {
  const bytes: number[] = []
  const soft = text.replace(/=\r?\n/g, '')
  for (let i = 0; i < soft.length; i++) {
    const c = soft[i]!
    if (c === '=' && /^[0-9A-F]{2}$/i.test(soft.slice(i + 1, i + 3))) {
      bytes.push(parseInt(soft.slice(i + 1, i + 3), 16))
      i += 2
    } else bytes.push(...Buffer.from(c))
  }
  return Buffer.from(bytes).toString('utf8')
}

/** The subject and HTML of a simple nodemailer message (single part, QP, 7bit or base64). */
export function parseMail(raw: string): { subject: string; html: string } {
  const [head, ...rest] = raw.split(/\r?\n\r?\n/)
  const headers = head!.replace(/\r?\n[ \t]+/g, ' ')
  let subject = /^Subject: (.*)$/im.exec(headers)?.[1] ?? ''
  subject = subject.replace(/=\?utf-8\?Q\?(.*?)\?=/gi, (_, q: string) => decodeQuotedPrintable(q.replace(/_/g, ' '))).replace(/\?= =\?/g, '')
  const encoding = /^Content-Transfer-Encoding: (.*)$/im.exec(headers)?.[1]?.trim().toLowerCase()
  const body = rest.join('\n\n')
  const html = encoding === 'quoted-printable' ? decodeQuotedPrintable(body) : encoding === 'base64' ? Buffer.from(body, 'base64').toString('utf8') : body
  return { subject, html }
}

export async function startMailCatcher(t: Teardown): Promise<MailCatcher> {
  const messages: ReceivedMail[] = []
  const waiters: Array<() => void> = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        messages.push({ to: session.envelope.rcptTo.map((r) => r.address), raw, ...parseMail(raw) })
        for (const w of waiters.splice(0)) w()
        callback()
      })
    },
  })
  const port = await freePort()
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    async next(to, since = 0) {
      const deadline = Date.now() + 10000
      for (;;) {
        const found = messages.slice(since).find((m) => m.to.includes(to))
        if (found) return found
        if (Date.now() > deadline) throw new Error(`no mail to ${to}`)
        await new Promise<void>((resolve) => {
          waiters.push(resolve)
          setTimeout(resolve, 200)
        })
      }
    },
  }
}

/** The href of the mail's button, with HTML entities undone. */
export function linkOf(mail: ReceivedMail): string {
  const match = /href="([^"]+)"/.exec(mail.html)
  if (!match) throw new Error(`no link in mail: ${mail.html}`)
  return match[1]!.replace(/&amp;/g, '&').replace(/&#39;/g, "'").replace(/&quot;/g, '"')
}

export function codeOf(mail: ReceivedMail): string {
  const match = /enter the code: (\d{6})/.exec(mail.html)
  if (!match) throw new Error('no code in mail')
  return match[1]!
}

export const SITE_URL = 'https://app.example.test'
export const ALLOWED = 'http://localhost:3000/**'

export interface AuthFixture {
  test: TestPlatform
  project: TestProject
  mail: MailCatcher
  anon: () => SupabaseClient
  admin: () => SupabaseClient
  url: (path: string) => string
}

export interface AuthPlatform {
  test: TestPlatform
  mail: MailCatcher
  /** A project of its own with auth on, its redirects and `options` set, on this platform. */
  fixture(options?: Record<string, unknown>): Promise<AuthFixture>
}

/**
 * A platform whose mail goes to a catcher of its own: a file's tests that need
 * the same configuration share it (starting one costs seconds), each with a
 * project of its own from fixture().
 */
export async function authPlatform(t: Teardown, env: Record<string, string> = {}): Promise<AuthPlatform> {
  const mail = await startMailCatcher(t)
  const test = await startTestPlatform(t, { SMTP_URL: mail.url, BASEPLANE_THROTTLE_MAX_FAILURES: '1000', ...env })
  return {
    test,
    mail,
    async fixture(options = {}) {
      const project = await test.createProject({ auth: true })
      await setRedirects(test.platform.controlPlane, project.ref, { siteUrl: SITE_URL, allow: [ALLOWED] })
      await setAuthOptions(test.platform.controlPlane, project.ref, { mail_min_interval_seconds: 0, ...options })
      const client = (key: string) =>
        createClient(project.baseUrl, key, {
          auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
        })
      return {
        test,
        project,
        mail,
        anon: () => client(project.anonKey),
        admin: () => client(project.serviceRoleKey),
        url: (path) => `${project.baseUrl}/auth/v1${path}`,
      }
    },
  }
}

/** A platform of its own (see authPlatform) with one project. */
export async function authFixture(t: Teardown, env: Record<string, string> = {}, options: Record<string, unknown> = {}): Promise<AuthFixture> {
  return (await authPlatform(t, env)).fixture(options)
}

/**
 * What auth answers, by the members tests read: an error, a session, a user,
 * a factor or a challenge. A body has only the members of its kind; the test
 * asserts the ones it reads.
 */
export interface AuthBody {
  code: string | number
  message: string
  msg: string
  error_code: string
  id: string
  access_token: string
  refresh_token: string
  expires_at: number
  user: { id: string; email: string; [member: string]: unknown }
  totp: { qr_code: string; secret: string; uri: string }
  factors: Array<{ id: string; status: string; factor_type: string; friendly_name?: string }>
  [member: string]: unknown
}

/** A raw call to the auth API with the anon key (and a user token when given); `body` is read as `T`. */
export async function call<T = AuthBody>(
  fixture: AuthFixture,
  method: string,
  path: string,
  body?: unknown,
  options: { token?: string; key?: string; headers?: Record<string, string>; version?: boolean } = {},
): Promise<{ status: number; body: T; headers: Headers }> {
  const headers: Record<string, string> = { apikey: options.key ?? fixture.project.anonKey, 'content-type': 'application/json', ...options.headers }
  if (options.version !== false) headers['x-supabase-api-version'] = '2024-01-01'
  if (options.token) headers.authorization = `Bearer ${options.token}`
  const response = await fetch(fixture.url(path), { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body), redirect: 'manual' })
  const text = await response.text()
  let parsed: unknown = text
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {}
  return { status: response.status, body: parsed as T, headers: response.headers }
}

/** Session values from the fragment of a redirect Location. */
export function fragmentOf(location: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(new URL(location).hash.slice(1)))
}

/** The project's Auth settings through the admin API (`GET`/`PATCH /platform/v1/projects/{ref}/auth`), answered as status and JSON body. */
export function authSettingsApi(f: AuthFixture): (method: string, body?: unknown) => Promise<{ status: number; body: Record<string, unknown> }> {
  return (method, body) =>
    fetch(`${f.test.origin}/platform/v1/projects/${f.project.ref}/auth`, {
      method,
      headers: { authorization: `Bearer ${f.test.config.adminToken}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }))
}

/** A confirmed user made with the admin API and signed in on an anon client: its id, the client and its access token. */
export async function signedIn(f: AuthFixture, email: string, password = 'password 123'): Promise<{ id: string; client: SupabaseClient; token: string }> {
  const created = await f.admin().auth.admin.createUser({ email, password, email_confirm: true })
  if (created.error) throw created.error
  const client = f.anon()
  const signIn = await client.auth.signInWithPassword({ email, password })
  if (signIn.error) throw signIn.error
  return { id: created.data.user!.id, client, token: signIn.data.session!.access_token }
}

/** A statement in the project's database as the server's superuser (what a test sets up or checks behind the API). */
export async function projectSql<T extends pg.QueryResultRow = pg.QueryResultRow>(f: AuthFixture, sql: string, values?: unknown[]): Promise<pg.QueryResult<T>> {
  return adminQuery<T>(withDatabase(await serverUrl(), f.project.record.dbName), sql, values)
}
