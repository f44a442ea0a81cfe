// Events for the host (issue 27 item 5): each lifecycle change of a project
// appends an event in the catalogue; the operator webhook receives it signed
// per Standard Webhooks (verified here from the secret) and, when it fails,
// again with the same webhook-id after the schedule's first delay; the admin
// API lists events newest first with filters and pages, refusing bad filters
// with its error shape naming the field.
import crypto from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { adminQuery, connectClient } from '../helpers/db.ts'
import { eventually } from '../helpers/eventually.ts'
import { request, type ErrorBody } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const SECRET_BYTES = crypto.randomBytes(32)
const SECRET = `whsec_${SECRET_BYTES.toString('base64')}`

interface Received {
  headers: http.IncomingHttpHeaders
  body: string
  answered: number
}

interface Receiver {
  url: string
  received: Received[]
  /** While set, the next post is held unanswered (and the redelivery of its id is taken at once). */
  hold: boolean
  /** Posts held so far, each answered 204 by calling it. */
  held: Array<() => void>
}

/** The operator's receiver: answers 500 to the first post of each webhook-id, 204 after. */
async function receiver(t: { teardown(fn: () => unknown): void }): Promise<Receiver> {
  const failedOnce = new Set<string>()
  const hook: Receiver = { url: '', received: [], hold: false, held: [] }
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (chunk: Buffer) => (body += chunk))
    req.on('end', () => {
      const id = String(req.headers['webhook-id'])
      if (hook.hold) {
        hook.hold = false
        failedOnce.add(id)
        hook.received.push({ headers: req.headers, body, answered: 0 })
        hook.held.push(() => {
          if (!res.headersSent) res.writeHead(204).end()
        })
        return
      }
      const answered = failedOnce.has(id) ? 204 : 500
      failedOnce.add(id)
      hook.received.push({ headers: req.headers, body, answered })
      res.writeHead(answered).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    for (const answer of hook.held) answer()
    server.closeAllConnections()
    return new Promise((resolve) => server.close(resolve))
  })
  hook.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/baseplane`
  return hook
}

/** What a receiver checks (Standard Webhooks): the HMAC of `id.timestamp.body` under the secret. */
function signatureValid(headers: http.IncomingHttpHeaders, body: string): boolean {
  const expected = crypto.createHmac('sha256', SECRET_BYTES).update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`).digest('base64')
  return String(headers['webhook-signature'])
    .split(' ')
    .some((part) => part.replace(/,$/, '') === `v1,${expected}`)
}

const hook = await receiver(t)
const platform = await startTestPlatform(t, { BASEPLANE_OPERATOR_WEBHOOK_URL: hook.url, BASEPLANE_OPERATOR_WEBHOOK_SECRET: SECRET })
const admin = <T = Record<string, unknown>>(method: string, path: string, body?: object) =>
  request<T & ErrorBody>(`${platform.origin}/platform/v1${path}`, { method, headers: { authorization: `Bearer ${platform.config.adminToken}` }, body })

interface EventBody {
  id: number
  kind: string
  ref: string
  at: string
  data: Record<string, unknown>
  delivery: { state: string; attempts: number; last_error: string | null; delivered_at: string | null }
}
type Page = { events: EventBody[]; next_before: number | null }

let ref = ''
let other = ''

t.test('each lifecycle change appends an event', async (t) => {
  const created = await admin<{ ref: string }>('POST', '/projects', { name: 'Evented', plan: 'free' })
  t.equal(created.status, 201, created.text)
  ref = created.json.ref
  other = (await platform.createProject({ name: 'Other' })).ref
  t.equal((await admin('PATCH', `/projects/${ref}`, { plan: 'pro' })).status, 200)
  t.equal((await admin('PATCH', `/projects/${ref}`, { plan: 'pro' })).status, 200, 'the same plan again: no change, no event')
  t.equal((await admin('POST', `/projects/${ref}/suspend`, { reason: 'chargeback' })).status, 200)
  t.equal((await admin('POST', `/projects/${ref}/resume`)).status, 200)
  t.equal((await admin('DELETE', `/projects/${ref}`)).status, 204)
  const page = await admin<Page>('GET', `/events?project=${ref}`)
  t.equal(page.status, 200, page.text)
  t.same(
    page.json.events.map((e) => [e.kind, e.data]),
    [
      ['project.deleted', { name: 'Evented', plan: 'pro' }],
      ['project.resumed', { from: 'suspended', by: 'operator' }],
      ['project.suspended', { reason: 'chargeback' }],
      ['project.plan_changed', { from: 'free', to: 'pro' }],
      ['project.created', { name: 'Evented', plan: 'free' }],
    ],
    "newest first; a deleted project's events are kept",
  )
  t.equal(page.json.next_before, null)
  for (const event of page.json.events) t.match(event, { ref, id: Number, at: String, delivery: { state: /^(pending|delivered)$/ } })
})

t.test('the webhook receives each event signed, and again after it failed once', async (t) => {
  // Six events in all (two creations, and four more of `ref`); each is refused once, then taken after the 5 s retry.
  const done = await eventually('every event delivered', 40000, async () => {
    const page = await admin<Page>('GET', '/events?limit=100')
    return page.json.events.length === 6 && page.json.events.every((e) => e.delivery.state === 'delivered') && page.json
  })
  for (const event of done.events) t.match(event.delivery, { state: 'delivered', attempts: 2, last_error: null, delivered_at: String }, `${event.kind}: the second attempt took it`)
  const suspended = done.events.find((e) => e.kind === 'project.suspended' && e.ref === ref)!
  const posts = hook.received.filter((r) => r.headers['webhook-id'] === `evt_${suspended.id}`)
  t.same(posts.map((p) => p.answered), [500, 204], 'refused once, then delivered')
  for (const post of posts) {
    t.ok(signatureValid(post.headers, post.body), 'signed with the secret (Standard Webhooks)')
    t.equal(post.headers['content-type'], 'application/json')
    t.ok(Math.abs(Number(post.headers['webhook-timestamp']) - Date.now() / 1000) < 120, 'a current timestamp')
  }
  t.ok(Number(posts[1]!.headers['webhook-timestamp']) - Number(posts[0]!.headers['webhook-timestamp']) >= 4, 'retried after the first delay (5 s)')
  t.same(JSON.parse(posts[1]!.body), { type: 'project.suspended', timestamp: suspended.at, actor: 'operator', data: { event_id: suspended.id, ref, reason: 'chargeback' } })
  t.notOk(signatureValid({ ...posts[1]!.headers }, posts[1]!.body.replace('chargeback', 'forged')), 'a changed body fails the check')
  t.equal(hook.received.length, 12, 'two posts per event, no more')
})

t.test('filters and pages', async (t) => {
  const suspensions = await admin<Page>('GET', '/events?kind=project.suspended')
  t.same(suspensions.json.events.map((e) => e.ref), [ref])
  const created = await admin<Page>(`GET`, `/events?kind=project.created&project=${other}`)
  t.same(created.json.events.map((e) => [e.kind, e.ref]), [['project.created', other]])
  const future = await admin<Page>('GET', `/events?since=${new Date(Date.now() + 3600_000).toISOString()}`)
  t.same(future.json, { events: [], next_before: null })
  const since = await admin<Page>('GET', '/events?since=2000-01-01')
  t.equal(since.json.events.length, 6)
  const first = await admin<Page>('GET', '/events?limit=4')
  t.equal(first.json.events.length, 4)
  t.equal(first.json.next_before, first.json.events[3]!.id)
  const second = await admin<Page>('GET', `/events?limit=4&before=${first.json.next_before}`)
  t.equal(second.json.events.length, 2)
  t.equal(second.json.next_before, null, 'the last page')
  const ids = [...first.json.events, ...second.json.events].map((e) => e.id)
  t.same(ids, [...ids].sort((a, b) => b - a), 'newest first across pages')
  t.equal(new Set(ids).size, 6, 'every event once')
})

t.test('bad filters are refused, naming the field', async (t) => {
  for (const [query, field] of [
    ['kind=project.exploded', 'kind'],
    ['kind=', 'kind'],
    ['project=Not-A-Ref', 'project'],
    ['since=yesterday', 'since'],
    ['since=2026-13-45', 'since'],
    ['limit=0', 'limit'],
    ['limit=5000', 'limit'],
    ['limit=ten', 'limit'],
    ['before=x', 'before'],
  ] as const) {
    const refused = await admin('GET', `/events?${query}`)
    t.equal(refused.status, 400, query)
    t.same(Object.keys(refused.json).sort(), ['code', 'message'], `${query}: the admin API's shape`)
    t.equal(refused.json.code, 'invalid_argument')
    t.match(refused.json.message, new RegExp(`^${field} `), `${query}: names ${field}`)
  }
})

t.test('one node posts an event at a time, and a node that dies mid-post loses nothing', async (t) => {
  hook.hold = true
  const created = await admin<{ ref: string }>('POST', '/projects', { name: 'Held' })
  t.equal(created.status, 201)
  const event = (await admin<Page>('GET', `/events?project=${created.json.ref}`)).json.events[0]!
  await eventually('the post to arrive and be held', 10000, async () => hook.held.length === 1)
  // Another node looking for due events passes this one by: it is claimed (its row locked) while posted.
  const other = await connectClient(platform.catalogueUrl)
  t.teardown(() => other.end())
  await other.query('begin')
  const claimed = await other.query(`select id from baseplane.events where id = $1 and delivery = 'pending' for update skip locked`, [event.id])
  await other.query('rollback')
  t.equal(claimed.rowCount, 0, 'claimed by the posting node, skipped by the others')
  // The posting node dies mid-post: its connection ends, and with it the claim.
  await adminQuery(platform.catalogueUrl, `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'baseplane-event-outbox' and datname = current_database()`)
  hook.held[0]!()
  const delivered = await eventually('the event posted again and delivered', 15000, async () => {
    const page = await admin<Page>('GET', `/events?project=${created.json.ref}`)
    return page.json.events[0]!.delivery.state === 'delivered' && page.json.events[0]!
  })
  t.equal(delivered.delivery.attempts, 1, 'the attempt cut short was never recorded; the next one was')
  const posts = hook.received.filter((r) => r.headers['webhook-id'] === `evt_${event.id}`)
  t.equal(posts.length, 2, 'posted again, with the same webhook-id (receivers deduplicate by it)')
  t.equal(posts[0]!.body, posts[1]!.body)
})
