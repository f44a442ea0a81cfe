// HTTP/1.1 as clients expect it, on both HTTP engines (issue 23 item 5): HEAD
// answers every GET route with its headers and no body, and pipelined requests
// are answered in order or refused before any of them runs, never run without an
// answer. Spoken by hand, since client libraries neither pipeline nor show a
// stray body.
import t from 'tap'
import { request } from '../helpers/http.ts'
import { exchange, rawRequest } from '../helpers/raw-http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const PASSWORD = 'correct horse battery staple'

for (const engine of ['uws', 'node'] as const) {
  t.test(`${engine} engine`, async (t) => {
    const fixture = await startTestPlatform(t, { BASEPLANE_HTTP_ENGINE: engine })
    t.equal(fixture.platform.httpEngine.name, engine === 'uws' ? 'uWebSockets.js' : 'node:http')
    const project = await fixture.createProject({ auth: true })
    const { port } = fixture.platform
    const prefix = `/project/${project.ref}`
    const apikey = { apikey: project.anonKey }
    let emails = 0
    const signUp = () => {
      const email = `pipelined-${engine}-${++emails}@example.test`
      return { email, bytes: rawRequest('POST', `${prefix}/auth/v1/signup`, { ...apikey, 'Content-Type': 'application/json' }, JSON.stringify({ email, password: PASSWORD })) }
    }
    const userExists = async (email: string) => {
      const reply = await request<{ users: Array<{ email: string }> }>(`${project.baseUrl}/auth/v1/admin/users?per_page=1000`, {
        headers: { apikey: project.serviceRoleKey, authorization: `Bearer ${project.serviceRoleKey}` },
      })
      t.equal(reply.status, 200, 'the admin API lists users')
      return reply.json.users.some((user) => user.email === email)
    }

    t.test('HEAD answers a GET route with its headers and no body, and the connection stays in step', async (t) => {
      for (const path of ['/health', `${prefix}/health`, `${prefix}/auth/v1/settings`]) {
        const get = await exchange(port, [rawRequest('GET', path, apikey)], { expect: 1 })
        t.equal(get.responses[0]?.status, 200, `GET ${path}`)
        const getBody = get.responses[0]!.body
        t.ok(getBody.length > 0)
        // HEAD, then GET on the same connection: a body after the HEAD answer would be read as the next response.
        const both = await exchange(port, [rawRequest('HEAD', path, apikey), rawRequest('GET', path, apikey)], { expect: 2, heads: [true, false], afterAnswers: true })
        t.equal(both.responses.length, 2, `HEAD ${path} then GET: two answers`)
        const [head, next] = both.responses
        t.equal(head!.status, 200, `HEAD ${path}`)
        t.equal(head!.headers['content-length'], String(Buffer.byteLength(getBody)), 'the GET answer\'s length')
        t.match(head!.headers['content-type'], /^application\/json/)
        t.equal(head!.body, '', 'no body')
        t.equal(next!.status, 200)
        t.same(JSON.parse(next!.body), JSON.parse(getBody), 'the following GET reads cleanly')
        t.equal(both.leftover, '', 'nothing stray on the connection')
      }
    })

    t.test('headers up to 16 KiB are read; larger ones are refused by the server with 431', async (t) => {
      // A signed-in user's token with some metadata: past uWS's own default of 4 KiB.
      const padding = 'x'.repeat(12 * 1024)
      const read = await exchange(port, [rawRequest('GET', `${prefix}/auth/v1/settings`, { ...apikey, 'x-padding': padding })], { expect: 1 })
      t.equal(read.responses[0]?.status, 200, '12 KiB of headers')
      const refused = await exchange(port, [rawRequest('GET', `${prefix}/auth/v1/settings`, { ...apikey, 'x-padding': padding + padding })], { expect: 1, settleMillis: 500 })
      t.equal(refused.responses[0]?.status, 431, '24 KiB of headers: 431')
    })

    t.test('Connection: close is honoured', async (t) => {
      const reply = await exchange(port, [rawRequest('GET', '/health', { Connection: 'close' })], { expect: 1, settleMillis: 2000 })
      t.equal(reply.responses[0]?.status, 200)
      t.ok(reply.closed, 'the server closed the connection after the answer')
    })

    t.test('a sign-up pipelined with a GET in one packet: both answered in order, or neither run', async (t) => {
      const first = signUp()
      const piped = await exchange(port, [first.bytes + rawRequest('GET', '/health')], { expect: 2 })
      if (engine === 'node') {
        t.same(piped.responses.map((r) => r.status), [200, 200], 'node:http answers both, in order')
        t.ok(JSON.parse(piped.responses[0]!.body).id, 'the first answer is the sign-up\'s')
        t.equal(JSON.parse(piped.responses[1]!.body).status, 'ok', 'the second is /health\'s')
        t.ok(await userExists(first.email), 'the answered sign-up happened')
      } else {
        // uWebSockets.js closes a connection that pipelines behind an unanswered request: nothing may have run.
        t.same(piped.responses, [], 'uWS answers neither')
        t.ok(piped.closed, 'and closes the connection')
        t.notOk(await userExists(first.email), 'the unanswered sign-up did not happen')
      }
      const after = await request(`${fixture.origin}/health`)
      t.equal(after.status, 200, 'the server goes on serving new connections')
    })

    t.test('a sign-up whose body ends in the packet that carries the next request', async (t) => {
      const { email, bytes } = signUp()
      const cut = bytes.length - 10
      const piped = await exchange(port, [bytes.slice(0, cut), bytes.slice(cut) + rawRequest('GET', '/health')], { expect: 2, gapMillis: 150 })
      if (engine === 'node') {
        t.same(piped.responses.map((r) => r.status), [200, 200])
        t.ok(await userExists(email))
      } else {
        t.same(piped.responses, [])
        t.notOk(await userExists(email), 'the sign-up whose connection closed unanswered did not happen')
      }
    })

    t.test('requests written one after another on a kept-alive connection are each answered', async (t) => {
      const { email, bytes } = signUp()
      const replies = await exchange(port, [bytes, rawRequest('GET', `${prefix}/auth/v1/settings`, apikey), rawRequest('HEAD', '/health')], {
        expect: 3,
        heads: [false, false, true],
        afterAnswers: true,
      })
      t.same(replies.responses.map((r) => r.status), [200, 200, 200])
      t.notOk(replies.closed)
      t.ok(await userExists(email))
    })

    t.test('pipelined GETs the data plane answers at once: each answered, in order', async (t) => {
      const health = rawRequest('GET', `${prefix}/health`, apikey)
      await exchange(port, [health], { expect: 1 })
      const piped = await exchange(port, [health + rawRequest('GET', `${prefix}/graphql/v1`) + rawRequest('HEAD', `${prefix}/health`, apikey)], {
        expect: 3,
        heads: [false, false, true],
      })
      t.same(piped.responses.map((r) => r.status), [200, 401, 200], 'each answered, in order')
      t.equal(JSON.parse(piped.responses[0]!.body).ref, project.ref)
      t.notOk(piped.closed, 'the connection stays open')
    })

    t.test('a pipelined GET behind one that waits on a worker', async (t) => {
      const piped = await exchange(port, [rawRequest('GET', `${prefix}/auth/v1/settings`, apikey) + rawRequest('GET', `${prefix}/health`, apikey)], { expect: 2 })
      if (engine === 'node') {
        t.same(piped.responses.map((r) => r.status), [200, 200], 'node:http answers both, in order')
        t.ok(JSON.parse(piped.responses[0]!.body).external, 'the first answer is the settings')
      } else {
        t.same(piped.responses, [], 'uWS answers neither')
        t.ok(piped.closed)
      }
    })
  })
}
