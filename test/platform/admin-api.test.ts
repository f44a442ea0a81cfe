import t from 'tap'
import type { dbUrlView, keysView, projectView } from '../../control-plane/views.ts'
import { request } from '../helpers/http.ts'

type ProjectBody = ReturnType<typeof projectView>
type KeysBody = ReturnType<typeof keysView>
import { startTestPlatform } from '../helpers/platform.ts'

const platform = await startTestPlatform(t)
const admin = `${platform.origin}/platform/v1`
const auth = { authorization: `Bearer ${platform.config.adminToken}` }

t.test('the admin token guards every operation', async (t) => {
  for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: platform.config.adminToken! }] as Array<Record<string, string>>) {
    const reply = await request(`${admin}/projects`, { headers })
    t.same({ status: reply.status, body: reply.json }, { status: 401, body: { code: 'unauthorized', message: 'A valid platform admin token is required' } })
  }
})

t.test('create, read, change, rotate and delete a project', async (t) => {
  const created = await request<ProjectBody & KeysBody>(`${admin}/projects`, { headers: auth, body: { name: 'Api Shop', plan: 'pro' } })
  t.equal(created.status, 201)
  const ref = created.json.ref
  t.match(created.json, { name: 'Api Shop', plan: 'pro', products: { auth: false, graphql: true, push: false }, anon_key: /^ey/, service_role_key: /^ey/ })
  const listed = await request<ProjectBody[]>(`${admin}/projects`, { headers: auth })
  t.same(listed.json.map((p) => p.ref), [ref])
  t.notOk('anon_key' in listed.json[0]!, 'listing shows no keys')
  const patched = await request<ProjectBody>(`${admin}/projects/${ref}`, { method: 'PATCH', headers: auth, body: { plan: 'business' } })
  t.equal(patched.json.plan, 'business')
  const enabled = await request<ProjectBody>(`${admin}/projects/${ref}/products/auth`, { method: 'PUT', headers: auth })
  t.equal(enabled.json.products.auth, true)
  const live = await request(`${platform.origin}/project/${ref}/auth/v1/health`, { headers: { apikey: created.json.anon_key } })
  t.equal(live.status, 200, 'enabled through the API, live on the next request')
  const keys = await request<KeysBody>(`${admin}/projects/${ref}/keys`, { headers: auth })
  t.equal(keys.json.anon_key, created.json.anon_key)
  const rotated = await request<KeysBody>(`${admin}/projects/${ref}/keys/rotate`, { method: 'POST', headers: auth })
  t.not(rotated.json.anon_key, created.json.anon_key)
  const dbUrl = await request<ReturnType<typeof dbUrlView>>(`${admin}/projects/${ref}/db-url`, { headers: auth })
  t.match(dbUrl.json.db_url, new RegExp(`^postgres://bp_${ref}_owner:`))
  const deleted = await request(`${admin}/projects/${ref}`, { method: 'DELETE', headers: auth })
  t.equal(deleted.status, 204)
  const gone = await request(`${admin}/projects/${ref}`, { headers: auth })
  t.same({ status: gone.status, body: gone.json }, { status: 404, body: { code: 'project_not_found', message: `Project "${ref}" not found` } })
})

t.test('bad requests get clear errors and change nothing', async (t) => {
  const cases: Array<[string, string, unknown, number, string, string]> = [
    ['POST', '/projects', '{not json', 400, 'bad_json', 'Could not parse request body as JSON'],
    ['POST', '/projects', {}, 400, 'invalid_argument', '"name" is required'],
    ['POST', '/projects', { name: 42 }, 400, 'invalid_argument', '"name" must be a string'],
    ['POST', '/projects', { name: 'x', plan: 'gold' }, 400, 'invalid_argument', 'Unknown plan "gold": use one of free, plus, pro, business'],
    ['PUT', '/projects/nosuchproject/products/auth', undefined, 404, 'project_not_found', 'Project "nosuchproject" not found'],
    ['GET', '/nowhere', undefined, 404, 'not_found', 'No route for /platform/v1/nowhere'],
    ['PUT', '/projects', undefined, 405, 'method_not_allowed', 'PUT is not allowed on /platform/v1/projects'],
  ]
  for (const [method, path, body, status, code, message] of cases) {
    const reply = await request(`${admin}${path}`, { method, headers: auth, body: body as string | object | undefined })
    t.same({ status: reply.status, body: reply.json }, { status, body: { code, message } }, `${method} ${path}`)
  }
  const listed = await request(`${admin}/projects`, { headers: auth })
  t.same(listed.json, [], 'no project was made by the failed requests')
})
