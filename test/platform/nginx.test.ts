// Behind nginx, it works as documented (issue 36 item 3): a real nginx runs the documented configuration
// (deploy/nginx/baseplane.conf, shown in docs/fleet.md; its ports changed) in front of the platform's
// uWebSockets.js engine, and every service answers through it. Without `proxy_http_version 1.1` nginx
// would speak HTTP/1.0, which uWebSockets.js answers 505 before any of our code runs; that answer is
// pinned here too, since the docs name it.
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { createClient } from '@supabase/supabase-js'
import pg from 'pg'
import t from 'tap'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { PACKAGE_ROOT } from '../../lib/package-root.ts'
import { signJwt } from '../../lib/jwt.ts'
import { request, type ErrorBody } from '../helpers/http.ts'
import { DOCUMENTED_CONFIG, nginxBinary, startNginx } from '../helpers/nginx.ts'
import { startTestPlatform } from '../helpers/platform.ts'

/** nginx connects to the platform from a loopback address of its own, so the platform can tell it from the client (127.0.0.1). */
const NGINX_ADDRESS = '127.0.0.2'

/** One request line written by hand (HTTP/1.0 by default), the whole answer read until the server closes. */
function http10(port: number, target: string, requestLine = `GET ${target} HTTP/1.0`): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    socket.on('connect', () => socket.write(`${requestLine}\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`))
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1')
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1]), text })
    })
  })
}

const binary = nginxBinary()

t.test('docs/fleet.md shows the configuration the test runs', async (t) => {
  const page = fs.readFileSync(path.join(PACKAGE_ROOT, 'docs/fleet.md'), 'utf8')
  t.ok(page.includes('```nginx\n' + fs.readFileSync(DOCUMENTED_CONFIG, 'utf8') + '```'), 'deploy/nginx/baseplane.conf appears in docs/fleet.md as it is')
})

t.test('every service answers through nginx with the documented configuration', { skip: binary ? false : 'nginx is not installed (Debian: apt-get install nginx; .ci/run installs it)' }, async (t) => {
  const fixture = await startTestPlatform(t, { BASEPLANE_TRUSTED_PROXIES: NGINX_ADDRESS, BASEPLANE_THROTTLE_MAX_FAILURES: '1' })
  const nginx = await startNginx(t, binary!, fixture.platform.port, NGINX_ADDRESS)
  const project = await fixture.createProject({ name: 'Behind nginx', auth: true, push: true })
  const baseUrl = `${nginx.origin}/project/${project.ref}`
  const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
  owner.on('error', () => {})
  await owner.connect()
  t.teardown(() => owner.end())
  await owner.query(`create table public.notes (id int primary key, body text); grant select on public.notes to anon; insert into public.notes values (1, 'through nginx')`)

  const health = await request<{ status: string }>(`${nginx.origin}/health`)
  t.same({ status: health.status, body: health.json?.status }, { status: 200, body: 'ok' }, '/health')

  const supabase = createClient(baseUrl, project.anonKey, { auth: { persistSession: false, autoRefreshToken: false } })
  const signUp = await supabase.auth.signUp({ email: 'nginx@example.test', password: 'a long enough password' })
  t.equal(signUp.error, null, 'Auth: supabase-js signs up')
  t.equal(signUp.data.user?.email, 'nginx@example.test')

  const notes = await supabase.from('notes').select('id, body')
  t.same({ error: notes.error, data: notes.data }, { error: null, data: [{ id: 1, body: 'through nginx' }] }, 'REST: supabase-js reads a table')

  const graphql = await request<{ data?: { __typename: string }; errors?: unknown }>(`${baseUrl}/graphql/v1`, { headers: { apikey: project.anonKey }, body: { query: '{ __typename }' } })
  t.same({ status: graphql.status, errors: graphql.json.errors ?? null, data: graphql.json.data }, { status: 200, errors: null, data: { __typename: 'Query' } }, 'GraphQL')

  // Storage's uploads are larger than the other services' bodies: nginx leaves the limit to the platform.
  const service = createClient(baseUrl, project.serviceRoleKey, { auth: { persistSession: false, autoRefreshToken: false } })
  const bucket = await service.storage.createBucket('through-nginx')
  t.equal(bucket.error, null, 'Storage: a bucket is made')
  const bytes = Buffer.alloc(3 * 1024 * 1024, 7)
  const upload = await service.storage.from('through-nginx').upload('big.bin', bytes, { contentType: 'application/octet-stream' })
  t.equal(upload.error, null, 'Storage: a 3 MiB upload passes nginx')
  const download = await service.storage.from('through-nginx').download('big.bin')
  t.equal(download.error, null)
  t.equal(download.data?.size, bytes.length, 'and comes back whole')

  const user = signJwt(project.record.jwtSecret, { sub: '00000000-0000-4000-8000-000000000001', role: 'authenticated', aud: 'authenticated', exp: Math.floor(Date.now() / 1000) + 600 })
  const device = await request<{ id?: string } & Partial<ErrorBody>>(`${baseUrl}/push/v1/devices`, {
    headers: { apikey: project.anonKey, authorization: `Bearer ${user}` },
    body: { platform: 'apns', token: 'a'.repeat(64) },
  })
  t.ok(device.status === 200 || device.status === 201, `Push: a device is registered (${device.status} ${device.text})`)
  t.equal(device.json.code, undefined, 'with no error')

  const admin = await request<unknown[]>(`${nginx.origin}/platform/v1/projects`, { headers: { authorization: `Bearer ${fixture.config.adminToken}` } })
  t.equal(admin.status, 200, 'the admin API')
  t.ok(Array.isArray(admin.json) || typeof admin.json === 'object', 'answers its JSON')

  const signInPage = await request(`${nginx.origin}/dashboard`)
  t.equal(signInPage.status, 200, "the dashboard's sign-in page")
  t.match(signInPage.text, /action="\/dashboard\/login"/)
  const host = new URL(nginx.origin).host
  const signedIn = await request(`${nginx.origin}/dashboard/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: nginx.origin, host },
    body: `token=${encodeURIComponent(fixture.config.adminToken!)}`,
  })
  t.equal(signedIn.status, 303, 'signing in to the dashboard through nginx passes its same-origin check (Host is forwarded with its port)')

  const old = await http10(nginx.port, '/health')
  t.equal(old.status, 200, 'an HTTP/1.0 client is answered: nginx speaks HTTP/1.1 to the platform')
  const direct = await http10(fixture.platform.port, '/health')
  t.equal(direct.status, 505, 'HTTP/1.0 straight to uWebSockets.js answers 505 (what nginx without proxy_http_version 1.1 would meet)')
  t.match(direct.text, /This server does not support HTTP\/1\.0/)
  const absolute = await http10(fixture.platform.port, '/health', `GET http://127.0.0.1:${fixture.platform.port}/health HTTP/1.1`)
  t.equal(absolute.status, 505, 'so does an absolute-form target over HTTP/1.1, as the docs say')
  const absoluteViaNginx = await http10(nginx.port, '/health', `GET http://127.0.0.1:${nginx.port}/health HTTP/1.1`)
  t.equal(absoluteViaNginx.status, 200, 'through nginx it is answered')

  // The client nginx saw (127.0.0.1) is the address the throttle counts: not nginx's, not one the client wrote.
  fixture.platform.throttle.recordFailure(project.ref, '127.0.0.1')
  const spoofed = await request(`${baseUrl}/auth/v1/health`, { headers: { apikey: project.anonKey, 'x-forwarded-for': '198.51.100.1' } })
  t.same({ status: spoofed.status, code: spoofed.headers['x-sb-error-code'] }, { status: 429, code: 'over_request_rate_limit' }, 'the throttle counts the address nginx saw, read from its X-Forwarded-For')
  const direct429 = await request(`${project.baseUrl}/auth/v1/health`, { headers: { apikey: project.anonKey, 'x-forwarded-for': '198.51.100.1' } })
  t.equal(direct429.status, 429, 'and a client that bypasses nginx cannot name another address either')
})
