// The request log (issue 28 item 9): with BASEPLANE_REQUEST_LOG on, one JSON
// line per answered request on standard output (the project, the service, the
// method, the path, the status, the time and the bytes), never a secret: no
// query string, header or body. Off by default: nothing is written.
import t from 'tap'
import { formatRequestLog } from '../../lib/request-log.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

/** The request lines this process writes while `work` runs (the platform runs in it); other output passes through. */
async function captured(work: () => Promise<void>): Promise<Array<Record<string, unknown>>> {
  const lines: Array<Record<string, unknown>> = []
  const original = process.stdout.write.bind(process.stdout)
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')
    if (text.startsWith('{"time"') && text.includes('"type":"request"')) {
      for (const line of text.trim().split('\n')) lines.push(JSON.parse(line) as Record<string, unknown>)
      return true
    }
    return (original as (...args: unknown[]) => boolean)(chunk, ...rest)
  }) as typeof process.stdout.write
  try {
    await work()
  } finally {
    process.stdout.write = original
  }
  return lines
}

t.test('on: a line per request, without secrets', async (t) => {
  const platform = await startTestPlatform(t, { BASEPLANE_REQUEST_LOG: 'true' })
  const project = await platform.createProject({ auth: true })
  const password = 'a secret password 123'
  const lines = await captured(async () => {
    const health = await request(`${project.baseUrl}/health?apikey=${project.anonKey}`)
    t.equal(health.status, 200)
    const signUp = await request(`${project.baseUrl}/auth/v1/signup`, { headers: { apikey: project.anonKey }, body: { email: 'logged@example.test', password } })
    t.equal(signUp.status, 200, signUp.text)
    const listed = await request(`${platform.origin}/platform/v1/projects`, { headers: { authorization: `Bearer ${platform.config.adminToken}` } })
    t.equal(listed.status, 200)
  })
  t.equal(lines.length, 3, 'three requests, three lines')
  t.match(lines[0], { type: 'request', ref: project.ref, service: 'other', method: 'GET', path: `/project/${project.ref}/health`, status: 200, address: '127.0.0.1' })
  t.match(lines[1], { ref: project.ref, service: 'auth', method: 'POST', path: `/project/${project.ref}/auth/v1/signup`, status: 200 })
  t.match(lines[2], { ref: null, service: 'platform', method: 'GET', path: '/platform/v1/projects', status: 200 })
  for (const line of lines) {
    t.type(line.ms, 'number')
    t.ok((line.bytes as number) > 0, 'the body bytes')
    t.ok(!Number.isNaN(Date.parse(line.time as string)), 'a time')
  }
  const text = JSON.stringify(lines)
  for (const secret of [project.anonKey, password, platform.config.adminToken!]) t.notOk(text.includes(secret), 'no key, password or token in the log')
})

t.test('off by default: nothing', async (t) => {
  const platform = await startTestPlatform(t)
  const project = await platform.createProject({})
  const lines = await captured(async () => {
    t.equal((await request(`${project.baseUrl}/health`, { headers: { apikey: project.anonKey } })).status, 200)
  })
  t.same(lines, [])
})

t.test('a long path is cut', async (t) => {
  const line = JSON.parse(formatRequestLog({ ref: null, service: 'platform', method: 'GET', path: '/x'.repeat(1000), status: 404, ms: 1.23456, bytes: 10, address: '::1' }))
  t.equal(line.path.length, 303)
  t.equal(line.ms, 1.23)
})
