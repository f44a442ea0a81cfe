// Pipelined requests (issue 36 item 8): several requests written on a kept-alive
// connection before the first is answered, on every service, writes included, on
// both HTTP engines. node:http answers every one, in order. uWebSockets.js
// 20.51 closes a connection when it parses a request while the one ahead of it
// waits for its answer (HttpContext.h, "denying async pipelining"), so requests
// it parses together can only be answered in order when those ahead are answered
// at once; the rest must then never run. A request the client sends after the
// server read the one ahead is held back until that one is answered, then served.
import pg from 'pg'
import t, { type Test } from 'tap'
import uWS from '@based/uws'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { signJwt } from '../../lib/jwt.ts'
import { adminUrlFor } from '../../lib/db/server-url.ts'
import { adminQuery } from '../helpers/db.ts'
import { eventually } from '../helpers/eventually.ts'
import { exchange, rawRequest, type RawResponse } from '../helpers/raw-http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const PASSWORD = 'correct horse battery staple'
/** The advisory lock the test holds while a REST call waits on it. */
const LOCK = 8036

// One catalogue and project for both engines: the node:http engine is a second node on them. Made
// before the first test: tap ends the file's root test once its queue drains, and would tear
// this down under a start still awaited.
const fixture = await startTestPlatform(t, { BASEPLANE_HTTP_ENGINE: 'uws' })
const project = await fixture.createProject({ auth: true, push: true })
const prefix = `/project/${project.ref}`
const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
owner.on('error', () => {})
await owner.connect()
t.teardown(() => owner.end())
await owner.query(`
  create table public.pipe (id bigint generated always as identity primary key, tag text not null);
  grant select, insert on public.pipe to anon, authenticated, service_role;
  insert into public.pipe (tag) values ('seed');
  -- A write whose answer the test holds back: it inserts, then waits for the test's lock.
  create function public.held(tag text) returns text language plpgsql as $$
  begin
    insert into public.pipe (tag) values (held.tag);
    perform pg_advisory_xact_lock(${LOCK});
    return held.tag;
  end $$;
  grant execute on function public.held(text) to service_role;
`)

t.test('the engine itself: uWS answers a request parsed behind a waiting one by closing the connection', async (t) => {
  // The minimal program of the closing note: an answer given a moment
  // later (onAborted, setTimeout, cork + end), with the socket paused meanwhile.
  const app = uWS.App()
  let handled = 0
  app.any('/*', (res, req) => {
    const n = ++handled
    const path = req.getUrl()
    let gone = false
    res.onAborted(() => (gone = true))
    res.pause()
    setTimeout(() => {
      if (!gone) {
        res.cork(() => {
          res.resume()
          res.end(`${n} ${path}`)
        })
      }
    }, 20)
  })
  const listening = await new Promise<uWS.us_listen_socket>((resolve, reject) => app.listen('127.0.0.1', 0, (socket) => (socket ? resolve(socket) : reject(new Error('no listen')))))
  t.teardown(() => uWS.us_listen_socket_close(listening))
  const port = uWS.us_socket_local_port(listening)
  const get = (path: string) => rawRequest('GET', path)

  const together = await exchange(port, [get('/a') + get('/b')], { expect: 2 })
  t.same(together.responses, [], 'two requests in one write: neither answered')
  t.ok(together.closed, 'the engine closed the connection')
  t.equal(handled, 1, 'the second never reached the application')

  // The second is written once the application holds the first (so the engine has read it), before its answer.
  const heldFirst = handled + 1
  const apart = await exchange(port, [get('/x'), get('/y')], {
    expect: 2,
    beforePacket: () => eventually('the first request reached the application', 2000, async () => handled >= heldFirst, 1),
  })
  t.same(apart.responses.map((r) => r.body), ['2 /x', '3 /y'], 'the second written after the first was read, the socket paused: both, in order')
  t.notOk(apart.closed)
})

for (const engine of ['uws', 'node'] as const) {
  t.test(`${engine} engine`, async (t) => {
    const node = engine === 'uws' ? fixture.platform : await fixture.startAnotherNode({ env: { BASEPLANE_HTTP_ENGINE: 'node' } })
    t.equal(node.httpEngine.name, engine === 'uws' ? 'uWebSockets.js' : 'node:http')
    const { port } = node
    const projectSql = async (sql: string, values: unknown[]) =>
      (await adminQuery<{ n: number }>(adminUrlFor(fixture.platform.controlPlane.defaultServerUrl, project.record.dbName), sql, values)).rows[0]!.n
    const userToken = signJwt(project.record.jwtSecret, { sub: crypto.randomUUID(), role: 'authenticated', aud: 'authenticated', exp: Math.floor(Date.now() / 1000) + 600 })
    const anon = { apikey: project.anonKey }
    const json = { 'Content-Type': 'application/json' }
    let tags = 0
    const tag = (kind: string) => `${engine}-${kind}-${++tags}`

    /** One request: its bytes, what its answer must be, and for a write how many times it ran. */
    interface Call {
      name: string
      bytes: string
      check(t: Test, response: RawResponse): void
      ran?: () => Promise<number>
    }
    const expectJson = (t: Test, response: RawResponse, status: number, name: string) => {
      t.equal(response.status, status, `${name}: ${response.body.slice(0, 200)}`)
      return JSON.parse(response.body)
    }
    const calls: Record<string, () => Call> = {
      health: () => ({
        name: 'GET /health',
        bytes: rawRequest('GET', '/health'),
        check: (t, r) => t.equal(expectJson(t, r, 200, 'GET /health').status, 'ok'),
      }),
      projectHealth: () => ({
        name: 'GET {base_url}/health',
        bytes: rawRequest('GET', `${prefix}/health`, anon),
        check: (t, r) => t.equal(expectJson(t, r, 200, 'project health').ref, project.ref),
      }),
      authSettings: () => ({
        name: 'Auth GET /settings',
        bytes: rawRequest('GET', `${prefix}/auth/v1/settings`, anon),
        check: (t, r) => t.ok(expectJson(t, r, 200, 'Auth settings').external, 'the settings'),
      }),
      signUp: () => {
        const email = `${tag('signup')}@example.test`
        return {
          name: 'Auth POST /signup',
          bytes: rawRequest('POST', `${prefix}/auth/v1/signup`, { ...anon, ...json }, JSON.stringify({ email, password: PASSWORD })),
          check: (t, r) => t.equal(expectJson(t, r, 200, 'sign-up').email, email),
          ran: () => projectSql('select count(*)::int as n from auth.users where email = $1', [email]),
        }
      },
      restGet: () => ({
        name: 'REST GET',
        bytes: rawRequest('GET', `${prefix}/rest/v1/pipe?select=tag&tag=eq.seed`, anon),
        check: (t, r) => t.same(expectJson(t, r, 200, 'REST GET'), [{ tag: 'seed' }]),
      }),
      restPost: () => {
        const value = tag('rest')
        return {
          name: 'REST POST',
          bytes: rawRequest('POST', `${prefix}/rest/v1/pipe?select=tag`, { ...anon, ...json, Prefer: 'return=representation' }, JSON.stringify({ tag: value })),
          check: (t, r) => t.same(expectJson(t, r, 201, 'REST POST'), [{ tag: value }]),
          ran: () => projectSql('select count(*)::int as n from public.pipe where tag = $1', [value]),
        }
      },
      graphqlRead: () => ({
        name: 'GraphQL query',
        bytes: rawRequest('POST', `${prefix}/graphql/v1`, { ...anon, ...json }, JSON.stringify({ query: '{ pipeCollection(filter: {tag: {eq: "seed"}}) { edges { node { tag } } } }' })),
        check: (t, r) => t.same(expectJson(t, r, 200, 'GraphQL query'), { data: { pipeCollection: { edges: [{ node: { tag: 'seed' } }] } } }),
      }),
      graphqlWrite: () => {
        const value = tag('graphql')
        return {
          name: 'GraphQL mutation',
          bytes: rawRequest('POST', `${prefix}/graphql/v1`, { ...anon, ...json }, JSON.stringify({ query: `mutation { insertIntopipeCollection(objects: [{tag: "${value}"}]) { records { tag } } }` })),
          check: (t, r) => t.same(expectJson(t, r, 200, 'GraphQL mutation'), { data: { insertIntopipeCollection: { records: [{ tag: value }] } } }),
          ran: () => projectSql('select count(*)::int as n from public.pipe where tag = $1', [value]),
        }
      },
      pushDevices: () => ({
        name: 'Push GET /devices',
        bytes: rawRequest('GET', `${prefix}/push/v1/devices`, { ...anon, Authorization: `Bearer ${userToken}` }),
        check: (t, r) => t.ok(Array.isArray(expectJson(t, r, 200, 'Push devices')), 'the user\'s devices'),
      }),
      pushDevice: () => {
        const token = Buffer.from(tag('device')).toString('hex').padEnd(64, '0')
        return {
          name: 'Push POST /devices',
          bytes: rawRequest('POST', `${prefix}/push/v1/devices`, { ...anon, ...json, Authorization: `Bearer ${userToken}` }, JSON.stringify({ platform: 'apns', token })),
          check: (t, r) => t.equal(expectJson(t, r, 201, 'Push device').token, token),
          ran: () => projectSql('select count(*)::int as n from push.devices where token = $1', [token]),
        }
      },
      admin: () => ({
        name: 'admin API GET /projects/{ref}',
        bytes: rawRequest('GET', `/platform/v1/projects/${project.ref}`, { Authorization: `Bearer ${fixture.config.adminToken}` }),
        check: (t, r) => t.equal(expectJson(t, r, 200, 'admin API').ref, project.ref),
      }),
    }
    const make = (...names: string[]) => names.map((name) => calls[name]!())
    // Warm every path once (worker threads, schema caches, the project record), so
    // what follows measures the connection's handling, not a first load.
    for (const call of make(...Object.keys(calls))) {
      const reply = await exchange(port, [call.bytes], { expect: 1 })
      call.check(t, reply.responses[0] ?? { status: 0, headers: {}, body: '""' })
    }

    /** Each answered call was answered right and ran once; each unanswered write never ran. */
    const checkOutcome = async (t: Test, batch: Call[], responses: RawResponse[]) => {
      for (const [i, call] of batch.entries()) {
        if (i < responses.length) call.check(t, responses[i]!)
        if (call.ran) t.equal(await call.ran(), i < responses.length ? 1 : 0, `${call.name} ran ${i < responses.length ? 'once' : 'never'}`)
      }
    }

    t.test('requests written in one write: every answer, in order (node:http); or, on uWS, those answered at once and none run past them', async (t) => {
      const batches = [
        ['health', 'projectHealth'],
        ['authSettings', 'signUp'],
        ['signUp', 'authSettings'],
        ['restGet', 'restPost'],
        ['restPost', 'restGet'],
        ['graphqlRead', 'graphqlWrite'],
        ['pushDevices', 'pushDevice'],
        ['admin', 'admin'],
        ['signUp', 'restPost', 'graphqlWrite', 'pushDevice', 'admin'],
        ['projectHealth', 'restPost', 'restGet', 'graphqlWrite', 'signUp'],
      ]
      for (const names of batches) {
        const batch = make(...names)
        const reply = await exchange(port, [batch.map((call) => call.bytes).join('')], { expect: batch.length, timeoutMillis: 15000 })
        const label = names.join(' + ')
        if (engine === 'node') {
          t.equal(reply.responses.length, batch.length, `${label}: every answer`)
          t.notOk(reply.closed, `${label}: the connection stays open`)
        } else if (reply.responses.length < batch.length) {
          t.ok(reply.closed, `${label}: ${reply.responses.length} answered at once, then the connection closed`)
        }
        t.equal(reply.leftover, '', `${label}: nothing stray`)
        await checkOutcome(t, batch, reply.responses)
      }
      if (engine === 'uws') {
        // A REST read always waits on a worker: nothing behind it can be answered, so nothing is run.
        const batch = make('restGet', 'restPost', 'signUp')
        const reply = await exchange(port, [batch.map((call) => call.bytes).join('')], { expect: 3 })
        t.same(reply.responses, [], 'uWS answers none behind a request that waits')
        await checkOutcome(t, batch, [])
      }
    })

    /**
     * Writes a REST call that waits on the test's lock, then, once PostgreSQL
     * shows it waiting (the server read it and runs it), `next` in one more write;
     * then lets the first finish.
     */
    const behindAWaitingWrite = async (next: Call[]) => {
      const first: Call = (() => {
        const value = tag('held')
        return {
          name: 'REST rpc held',
          bytes: rawRequest('POST', `${prefix}/rest/v1/rpc/held`, { apikey: project.serviceRoleKey, ...json }, JSON.stringify({ tag: value })),
          check: (t: Test, r: RawResponse) => t.equal(expectJson(t, r, 200, 'REST rpc'), value),
          ran: () => projectSql('select count(*)::int as n from public.pipe where tag = $1', [value]),
        }
      })()
      await owner.query('select pg_advisory_lock($1)', [LOCK])
      let released: Promise<unknown> | undefined
      const reply = await exchange(port, [first.bytes, next.map((call) => call.bytes).join('')], {
        expect: 1 + next.length,
        timeoutMillis: 20000,
        beforePacket: async () => {
          await eventually('the held call waits on the lock', 10000, async () => {
            const waiting = await owner.query<{ n: number }>(`select count(*)::int as n from pg_locks where locktype = 'advisory' and objid = $1 and not granted`, [LOCK])
            return waiting.rows[0]!.n === 1
          })
          // After the next packet is written (exchange writes it once this settles).
          setImmediate(() => (released = owner.query('select pg_advisory_unlock($1)', [LOCK])))
        },
      })
      await released
      return { batch: [first, ...next], reply }
    }

    t.test('a request written while the one ahead waits on a worker: both answered, in order, each run once', async (t) => {
      for (const name of Object.keys(calls)) {
        const { batch, reply } = await behindAWaitingWrite(make(name))
        t.equal(reply.responses.length, 2, `REST rpc, then ${batch[1]!.name}: both answered`)
        t.notOk(reply.closed, 'the connection stays open')
        await checkOutcome(t, batch, reply.responses)
      }
    })

    t.test('two requests written together while the one ahead waits: all answered (node:http); on uWS the first, then none run', async (t) => {
      const { batch, reply } = await behindAWaitingWrite(make('restPost', 'signUp'))
      if (engine === 'node') {
        t.equal(reply.responses.length, 3, 'node:http answers all three, in order')
      } else {
        t.equal(reply.responses.length, 1, 'the one ahead is answered')
        t.ok(reply.closed, 'then uWS closes the connection on the two it parses together')
      }
      await checkOutcome(t, batch, reply.responses)
    })
  })
}
