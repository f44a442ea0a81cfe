import t from 'tap'
import { request, type ErrorBody } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

// Platforms start slowly on a loaded machine: one behind trusted proxies (this test, from 127.0.0.1, is
// the proxy), one whose trusted proxies do not include the peer.
t.test('a refused address is refused by every service of the project, anon key or not', async (t) => {
  const platform = await startTestPlatform(t, { BASEPLANE_TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8', BASEPLANE_THROTTLE_MAX_FAILURES: '3' })
  const project = await platform.createProject({ name: 'Throttled', auth: true })
  const other = await platform.createProject({ name: 'Other', auth: true })
  for (let i = 0; i < 3; i++) platform.platform.throttle.recordFailure(project.ref, '203.0.113.7')
  const from = (address: string, apikey: string) => ({ apikey, 'x-forwarded-for': `10.9.9.9, ${address}`, 'x-supabase-api-version': '2024-01-01' })
  const targets: Array<[string, string | undefined]> = [
    ['/auth/v1/health', undefined],
    ['/graphql/v1', JSON.stringify({ query: '{ __typename }' })],
    ['/push/v1/devices', undefined],
    ['/health', undefined],
  ]
  for (const [path, body] of targets) {
    for (const apikey of [project.anonKey, project.serviceRoleKey]) {
      const reply = await request<ErrorBody>(`${project.baseUrl}${path}`, { headers: from('203.0.113.7', apikey), body })
      t.same(
        { status: reply.status, code: reply.json.code, header: reply.headers['x-sb-error-code'], retry: Number(reply.headers['retry-after']) > 0 },
        { status: 429, code: 'over_request_rate_limit', header: 'over_request_rate_limit', retry: true },
        path,
      )
    }
  }
  const elsewhere = await request(`${project.baseUrl}/auth/v1/health`, { headers: from('203.0.113.8', project.anonKey) })
  t.equal(elsewhere.status, 200, 'another address is served')
  const otherProject = await request(`${other.baseUrl}/auth/v1/health`, { headers: from('203.0.113.7', other.anonKey) })
  t.equal(otherProject.status, 200, 'another project is not affected')

  // From a trusted proxy, the client is the right-most X-Forwarded-For entry that is not a proxy.
  const via = (chain: string) => request(`${project.baseUrl}/auth/v1/health`, { headers: { apikey: project.anonKey, 'x-forwarded-for': chain } })
  t.equal((await via('198.51.100.1, 203.0.113.7, 10.1.2.3')).status, 429, 'the inner proxy is skipped, what the client wrote is not believed')
  t.equal((await via('203.0.113.7, 198.51.100.1')).status, 200, 'a client cannot take an address by writing it itself')
})

t.test('with trusted proxies that do not include the peer, a forwarded address is ignored', async (t) => {
  const platform = await startTestPlatform(t, { BASEPLANE_TRUSTED_PROXIES: '192.0.2.0/24, 2001:db8::/32', BASEPLANE_THROTTLE_MAX_FAILURES: '1' })
  const project = await platform.createProject({ name: 'Not a proxy', auth: true })
  platform.platform.throttle.recordFailure(project.ref, '203.0.113.7')
  const reply = await request(`${project.baseUrl}/auth/v1/health`, { headers: { apikey: project.anonKey, 'x-forwarded-for': '203.0.113.7' } })
  t.equal(reply.status, 200, 'the header is read only from a configured proxy address')
  platform.platform.throttle.recordFailure(project.ref, '127.0.0.1')
  const peer = await request(`${project.baseUrl}/auth/v1/health`, { headers: { apikey: project.anonKey, 'x-forwarded-for': '198.51.100.1' } })
  t.equal(peer.status, 429, 'the peer is the client: its own block holds whatever it forwards')
})

