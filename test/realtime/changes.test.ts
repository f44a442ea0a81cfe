// Realtime's Postgres Changes and broadcasts from SQL (issue 38 item 4)
// through the unmodified supabase-js, on both protocol versions: INSERT,
// UPDATE, DELETE and `*`; filters (several operators, `in`, `not.`,
// comma-AND); `select`; REPLICA IDENTITY FULL; RLS per user and column
// privileges; projects kept apart; bad bindings refused; the reader's thread
// killed and replaced; an idle project left with no slot; realtime.send() to
// public channels and never a private message to a public one. Logical
// decoding needs wal_level=logical: on a server without it (the local PG15)
// this file starts an embedded PostgreSQL of its own, and checks that the
// reader reports the setting there.
import crypto from 'node:crypto'
import { createClient, type RealtimeChannel, type SupabaseClient } from '@supabase/supabase-js'
import pg from 'pg'
import t from 'tap'
import WebSocket from 'ws'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { startTemporary } from '../../lib/db/embedded.ts'
import { adminUrlFor } from '../../lib/db/server-url.ts'
import { signJwt } from '../../lib/jwt.ts'
import { ProjectReader } from '../../workers/realtime/changes/project-reader.ts'
import type { ReaderStatus } from '../../workers/realtime/changes/messages.ts'
import { serverUrl } from '../helpers/db.ts'
import { startTestPlatform, type TestProject } from '../helpers/platform.ts'
import { collect } from './helpers.ts'
import fs from 'node:fs'
import { baseUrlOf } from '../../lib/catalogue.ts'
import { freePort } from '../../lib/db/embedded.ts'
import { createProject } from '../../control-plane/projects.ts'
import { createDatabase, dropCatalogue } from '../../dev/db.ts'
import { nodeConfig } from '../../dev/node-config.ts'
import { startPlatform } from '../../server/platform.ts'

async function walLevel(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<{ wal_level: string }>('show wal_level')).rows[0]!.wal_level
  } finally {
    await client.end()
  }
}

const given = await serverUrl()
const givenLevel = await walLevel(given)
if (givenLevel !== 'logical') {
  const own = await startTemporary()
  process.env.DATABASE_URL = own.url
  t.teardown(() => own.stop())
}
const server = await serverUrl()

const fixture = await startTestPlatform(t, { BASEPLANE_HTTP_ENGINE: 'uws' })
const project = await fixture.createProject({ name: 'Changes' })
const other = await fixture.createProject({ name: 'Changes elsewhere' })

async function asOwner(target: TestProject, sql: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: ownerUrlOf(target.record) })
  await client.connect()
  try {
    return await client.query(sql, values)
  } finally {
    await client.end()
  }
}

const alice = crypto.randomUUID()
const bob = crypto.randomUUID()

for (const target of [project, other]) {
  await asOwner(target, `
    create table public.items (id serial primary key, title text, n int, done boolean default false, tags jsonb);
    grant select, insert, update, delete on public.items to anon, authenticated;
    grant usage on sequence public.items_id_seq to anon, authenticated;
    create table public.full_items (id int primary key, title text, n int);
    alter table public.full_items replica identity full;
    grant select on public.full_items to anon;
    create table public.todos (id int primary key, owner uuid not null, title text, secret text);
    alter table public.todos enable row level security;
    create policy own_todos on public.todos for select to authenticated using (owner = auth.uid());
    revoke all on public.todos from anon, authenticated;
    grant select (id, owner, title) on public.todos to authenticated;
    create table public.unpublished (id int primary key);
    alter publication supabase_realtime add table public.items, public.full_items, public.todos;
  `)
}

type Vsn = '1.0.0' | '2.0.0'
const transport = WebSocket as never

function client(t: { teardown(fn: () => unknown): void }, target: TestProject = project, vsn: Vsn = '2.0.0', accessToken?: string): SupabaseClient {
  const supabase = createClient(target.baseUrl, target.anonKey, {
    auth: { persistSession: false, autoRefreshToken: false },
    realtime: { vsn, transport },
    ...(accessToken ? { accessToken: async () => accessToken } : {}),
  })
  t.teardown(async () => {
    await supabase.removeAllChannels()
    supabase.realtime.disconnect()
  })
  return supabase
}

const userToken = (sub: string) => signJwt(project.record.jwtSecret, { aud: 'authenticated', role: 'authenticated', sub, exp: Math.floor(Date.now() / 1000) + 3600 })

interface System {
  status: string
  message: string
  extension: string
  channel: string
}

/** Subscribes; resolves with the channel's first postgres_changes `system` message (its status says whether changes flow). */
function subscribed(channel: RealtimeChannel): Promise<{ status: string; system?: System; error?: string }> {
  return new Promise((resolve) => {
    let status = ''
    const timer = setTimeout(() => resolve({ status: `${status} (no system message)` }), 10000)
    channel.on('system', {}, (payload: System) => {
      if (payload.extension !== 'postgres_changes') return
      clearTimeout(timer)
      resolve({ status, system: payload })
    })
    channel.subscribe((state, error) => {
      if (state === 'CHANNEL_ERROR' && error?.message === 'socket closed: 1006') return
      status = state
      if (state !== 'SUBSCRIBED') {
        clearTimeout(timer)
        resolve({ status, ...(error ? { error: error.message } : {}) })
      }
    })
  })
}

const SUBSCRIBED = { status: 'ok', message: 'Subscribed to PostgreSQL', extension: 'postgres_changes' }

interface Heard {
  eventType: string
  new: Record<string, unknown>
  old: Record<string, unknown>
  errors: unknown
  table: string
  commit_timestamp: string
}

const changesOf = (channel: RealtimeChannel, binding: Record<string, unknown>) => (take: (value: Heard) => void) =>
  channel.on('postgres_changes' as never, binding as never, ((payload: Heard) => take(payload)) as never)

for (const vsn of ['2.0.0', '1.0.0'] as const) {
  t.test(`INSERT, UPDATE and DELETE on vsn ${vsn}`, async (t) => {
    const channel = client(t, project, vsn).channel(`items-${vsn}`)
    const seen: Heard[] = []
    const all = collect<Heard>((take) => changesOf(channel, { event: '*', schema: 'public', table: 'items' })((h) => (seen.push(h), take(h))), 3)
    const inserts = collect(changesOf(channel, { event: 'INSERT', schema: 'public', table: 'items' }), 1)
    const deletes = collect(changesOf(channel, { event: 'DELETE', schema: 'public', table: 'items' }), 1)
    const joined = await subscribed(channel)
    t.match(joined, { status: 'SUBSCRIBED', system: { ...SUBSCRIBED, channel: `items-${vsn}` } })
    const title = `row ${vsn}`
    // Each write once the one before was heard: an INSERT or UPDATE is checked against the row as it is then.
    const count = (n: number) => until(async () => seen.length >= n, `${n} changes`)
    const { rows } = await asOwner(project, `insert into items (title, n, tags) values ($1, 7, '{"a":[1]}') returning id`, [title])
    const id = rows[0].id as number
    await count(1)
    await asOwner(project, 'update items set done = true where id = $1', [id])
    await count(2)
    await asOwner(project, 'delete from items where id = $1', [id])
    const heard = await all
    t.equal(heard.length, 3)
    t.match(heard[0], { eventType: 'INSERT', table: 'items', new: { id, title, n: 7, done: false, tags: { a: [1] } }, errors: null })
    t.ok(!Number.isNaN(Date.parse(heard[0]!.commit_timestamp)), 'commit_timestamp is a time')
    t.match(heard[1], { eventType: 'UPDATE', new: { id, title, done: true }, old: { id }, errors: null })
    t.same(heard[1]!.old, { id }, 'old_record holds the primary key without REPLICA IDENTITY FULL')
    t.match(heard[2], { eventType: 'DELETE', old: { id }, errors: null })
    t.same((await inserts).map((h) => h.eventType), ['INSERT'])
    t.same((await deletes).map((h) => h.eventType), ['DELETE'])
  })
}

t.test('filters: operators, in, not. and comma-AND; select narrows the columns', async (t) => {
  const channel = client(t).channel('items-filters')
  const cases = {
    gt: 'n=gt.5',
    in: 'title=in.(apple,"b,c")',
    notAnd: 'title=not.eq.apple,n=lte.3',
    ilike: 'title=ilike.APP%',
    is: 'n=is.null',
    notIn: 'n=not.in.(1,2,3,10)',
  }
  const heard = Object.fromEntries(
    Object.entries(cases).map(([name, filter]) => [name, collect(changesOf(channel, { event: 'INSERT', schema: 'public', table: 'items', filter }), 10, 3000)]),
  ) as Record<keyof typeof cases, Promise<Heard[]>>
  const narrowed = collect(changesOf(channel, { event: 'INSERT', schema: 'public', table: 'items', filter: 'title=eq.narrow', select: ['id', 'title'] }), 1)
  t.match(await subscribed(channel), { status: 'SUBSCRIBED', system: SUBSCRIBED })
  await asOwner(project, `insert into items (title, n) values ('apple', 10), ('b,c', 1), ('pear', 2), ('apricot', null), ('narrow', 4)`)
  const titles = async (name: keyof typeof cases) => (await heard[name]).map((h) => h.new.title).sort()
  t.same(await titles('gt'), ['apple'])
  t.same(await titles('in'), ['apple', 'b,c'])
  t.same(await titles('notAnd'), ['b,c', 'pear'])
  t.same(await titles('ilike'), ['apple'])
  t.same(await titles('is'), ['apricot'])
  t.same(await titles('notIn'), ['narrow'])
  const [only] = await narrowed
  t.same(Object.keys(only?.new ?? {}).sort(), ['id', 'title'], 'select: only the columns asked for')
})

t.test('REPLICA IDENTITY FULL: old_record is the whole old row', async (t) => {
  const channel = client(t).channel('full-items')
  const heard = collect(changesOf(channel, { event: '*', schema: 'public', table: 'full_items' }), 3)
  t.match(await subscribed(channel), { status: 'SUBSCRIBED', system: SUBSCRIBED })
  // Three transactions: an INSERT or UPDATE is checked against the row as it is when the check runs.
  await asOwner(project, `insert into full_items values (1, 'one', 1)`)
  await asOwner(project, `update full_items set n = 2 where id = 1`)
  await asOwner(project, `delete from full_items where id = 1`)
  const [, update, del] = await heard
  t.same(update?.old, { id: 1, title: 'one', n: 1 })
  t.same(update?.new, { id: 1, title: 'one', n: 2 })
  t.same(del?.old, { id: 1, title: 'one', n: 2 })
})

t.test('RLS and column privileges: each user hears only the rows it may select, without the columns it may not', async (t) => {
  const a = client(t, project, '2.0.0', await userToken(alice)).channel('todos-a')
  const b = client(t, project, '1.0.0', await userToken(bob)).channel('todos-b')
  const anon = client(t).channel('todos-anon')
  const binding = { event: '*', schema: 'public', table: 'todos' }
  const heardA = collect(changesOf(a, binding), 3, 3000)
  const heardB = collect(changesOf(b, binding), 3, 3000)
  const heardAnon = collect(changesOf(anon, binding), 3, 3000)
  t.match(await subscribed(a), { status: 'SUBSCRIBED', system: SUBSCRIBED })
  t.match(await subscribed(b), { status: 'SUBSCRIBED', system: SUBSCRIBED })
  t.match(await subscribed(anon), { status: 'SUBSCRIBED', system: SUBSCRIBED })
  await asOwner(project, `insert into todos values (1, $1, 'alice''s', 's1'), (2, $2, 'bob''s', 's2'), (3, $1, 'alice''s too', 's3')`, [alice, bob])
  const gotA = await heardA
  const gotB = await heardB
  t.same(gotA.map((h) => h.new.id).sort(), [1, 3], 'alice hears her rows only')
  t.same(gotB.map((h) => h.new.id), [2], 'bob hears his only')
  t.same(Object.keys(gotA[0]?.new ?? {}).sort(), ['id', 'owner', 'title'], 'a column the role may not select is left out')
  t.same(await heardAnon, [], 'anon may select nothing of the table and hears nothing')
})

t.test('projects are apart: a change in one is never heard in another', async (t) => {
  const there = client(t, other).channel('items-elsewhere')
  const here = client(t).channel('items-here')
  const overheard = collect(changesOf(there, { event: 'INSERT', schema: 'public', table: 'items', filter: 'title=eq.isolated' }), 1, 2000)
  const heard = collect(changesOf(here, { event: 'INSERT', schema: 'public', table: 'items', filter: 'title=eq.isolated' }), 1)
  t.match(await subscribed(there), { status: 'SUBSCRIBED', system: SUBSCRIBED })
  t.match(await subscribed(here), { status: 'SUBSCRIBED', system: SUBSCRIBED })
  await asOwner(project, `insert into items (title) values ('isolated')`)
  t.equal((await heard).length, 1)
  t.same(await overheard, [])
})

t.test('bindings that cannot be served answer a system error; broadcast still works', async (t) => {
  for (const [name, binding, said] of [
    ['unknown table', { event: '*', schema: 'public', table: 'nope' }, /^Unable to subscribe to changes with given parameters/],
    ['table not in the publication', { event: '*', schema: 'public', table: 'unpublished' }, /Realtime is enabled/],
    ['bad operator', { event: '*', schema: 'public', table: 'items', filter: 'n=eqq.1' }, /^Error parsing `filter` params/],
    ['unknown column', { event: '*', schema: 'public', table: 'items', filter: 'nope=eq.1' }, /no column "nope"/],
  ] as const) {
    const channel = client(t).channel(`bad-${name.replaceAll(' ', '-')}`, { config: { broadcast: { self: true, ack: true } } })
    channel.on('postgres_changes' as never, binding as never, (() => {}) as never)
    const joined = await subscribed(channel)
    t.equal(joined.status, 'SUBSCRIBED', name)
    t.match(joined.system, { status: 'error', extension: 'postgres_changes', message: said }, name)
    t.equal(await channel.send({ type: 'broadcast', event: 'still', payload: {} }), 'ok', `${name}: broadcast works`)
  }
})

async function slots(target: TestProject): Promise<{ temporary: boolean; plugin: string }[]> {
  const client = new pg.Client({ connectionString: adminUrlFor(server, 'postgres') })
  await client.connect()
  try {
    return (await client.query('select temporary, plugin from pg_replication_slots where database = $1', [target.record.dbName])).rows
  } finally {
    await client.end()
  }
}

async function until(check: () => Promise<boolean>, what: string, ms = 8000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

t.test('the reader thread killed mid-stream is replaced; an idle project keeps no slot', async (t) => {
  const supabase = client(t)
  const channel = supabase.channel('items-resume')
  const systems: System[] = []
  channel.on('system', {}, (payload: System) => void systems.push(payload))
  const seen: Heard[] = []
  const heard = collect<Heard>((take) => changesOf(channel, { event: 'INSERT', schema: 'public', table: 'items', filter: 'title=like.resume%' })((h) => (seen.push(h), take(h))), 2, 15000)
  t.match(await subscribed(channel), { status: 'SUBSCRIBED', system: SUBSCRIBED })
  t.match(await slots(project), [{ temporary: true, plugin: 'pgoutput' }], 'one temporary pgoutput slot while subscribed')
  await asOwner(project, `insert into items (title) values ('resume 1')`)
  // Heard before the thread ends: what is committed while no reader streams is not delivered (docs/realtime.md).
  await until(async () => seen.length >= 1, 'the first change')
  await fixture.platform.realtimeChanges.readers!.terminate()
  await until(async () => systems.filter((s) => s.message === 'Subscribed to PostgreSQL').length >= 2, 'the reader to stream again', 15000)
  await asOwner(project, `insert into items (title) values ('resume 2')`)
  t.same((await heard).map((h) => h.new.title), ['resume 1', 'resume 2'])
  await supabase.removeAllChannels()
  await until(async () => (await slots(project)).length === 0, 'the slot to go once the project has no channel')
  t.pass('no slot once idle')
})

t.test('broadcasts from SQL: realtime.send() to a public channel; a private message never reaches it', async (t) => {
  const supabase = client(t)
  const room = supabase.channel('sql-room')
  const heard = collect<{ event: string; payload: unknown; meta?: { id?: string } }>((take) => room.on('broadcast', { event: '*' }, (message) => take(message as never)), 3, 4000)
  t.equal(await new Promise((resolve) => room.subscribe((status) => status !== 'CHANNEL_ERROR' && resolve(status))), 'SUBSCRIBED')
  // A channel without bindings hears no "Subscribed to PostgreSQL": the project's slot says its reader streams.
  await until(async () => (await slots(project)).length > 0, 'the project\'s reader')
  await asOwner(project, `select realtime.send('{"n": 1}'::jsonb, 'from-sql', 'sql-room', false)`)
  await asOwner(project, `select realtime.send('{"n": 2}'::jsonb, 'secret', 'sql-room', true)`)
  await asOwner(project, `select realtime.send('{"n": 3}'::jsonb, 'from-sql', 'sql-room', false)`)
  const got = await heard
  t.same(got.map((m) => [m.event, m.payload]), [['from-sql', { n: 1 }], ['from-sql', { n: 3 }]], 'public messages only, in order')
  t.match(got[0]?.meta, { id: /^[0-9a-f-]{36}$/ })
  const { rows } = await asOwner(project, `select id::text from realtime.messages where event = 'from-sql' order by inserted_at limit 1`)
  t.equal(got[0]?.meta?.id, rows[0].id, 'meta.id is the row of realtime.messages')
})

t.test("the visibility check waits until the change's transaction is visible (it is decoded a moment before), at most 100 ms", async (t) => {
  const admin = new pg.Client({ connectionString: adminUrlFor(server, project.record.dbName) })
  const writer = new pg.Client({ connectionString: adminUrlFor(server, project.record.dbName) })
  await admin.connect()
  await writer.connect()
  t.teardown(async () => {
    await admin.end()
    await writer.end()
  })
  await writer.query('begin')
  const { rows } = await writer.query<{ id: number; xid: string }>(`insert into public.items (title) values ('not yet') returning id, (txid_current() % 4294967296)::text as xid`)
  const check = async () => {
    const started = performance.now()
    const result = await admin.query<{ visible: number[] }>(
      `select visible from realtime.visible_rows('public.items'::regclass, $1::jsonb, $2::jsonb, array[$3]::xid[])`,
      [JSON.stringify([{ id: rows[0]!.id }]), JSON.stringify([{ role: 'service_role', claims: {}, rows: [1] }]), rows[0]!.xid],
    )
    return { visible: result.rows[0]!.visible, ms: performance.now() - started }
  }
  const open = await check()
  t.same(open.visible, [], 'an uncommitted row is not seen')
  t.ok(open.ms >= 95 && open.ms < 2000, `it waited for the transaction, boundedly (${open.ms.toFixed(0)} ms)`)
  await writer.query('commit')
  const committed = await check()
  t.same(committed.visible, [1], 'once committed, the row is seen')
  t.ok(committed.ms < 90, `without waiting (${committed.ms.toFixed(0)} ms)`)
  await asOwner(project, `delete from public.items where id = $1`, [rows[0]!.id])
})

t.test("a reader's replication connection holds one unit of its server's budget while it is open, given back when it closes or fails", async (t) => {
  let held = 0
  let taken = 0
  const connection = async () => {
    taken += 1
    held += 1
    let returned = false
    return { url: adminUrlFor(given, 'postgres'), release: () => void (returned ? t.fail('a unit given back twice') : ((returned = true), (held -= 1))) }
  }
  const statuses: ReaderStatus[] = []
  const reader = new ProjectReader('budget', connection, { batch: () => {}, status: (s) => void statuses.push(s) })
  reader.start()
  await until(async () => statuses.some((s) => s.state === 'streaming' || s.state === 'unavailable'), 'the reader to stream or say why it cannot')
  if (statuses.some((s) => s.state === 'streaming')) t.equal(held, 1, 'one unit while streaming')
  else await until(async () => held === 0, 'the failed connection to give its unit back')
  await reader.stop()
  t.ok(taken >= 1, 'the reader asked for its connection')
  t.equal(held, 0, 'every unit given back once stopped')
})

t.test('a server without logical WAL: the reader says which setting', { skip: givenLevel === 'logical' ? 'the given server has wal_level=logical' : false }, async (t) => {
  const status = await new Promise<ReaderStatus>((resolve) => {
    const reader = new ProjectReader('walcheck', async () => ({ url: adminUrlFor(given, 'postgres'), release: () => {} }), {
      batch: () => {},
      status: (s) => {
        void reader.stop()
        resolve(s)
      },
    })
    reader.start()
  })
  t.match(status, { state: 'unavailable', code: 'wal_level', message: /wal_level set to logical \(it is replica\)/ })
})

t.test('a platform on a server without logical WAL: the channel is told the setting, broadcast works', { skip: givenLevel === 'logical' ? 'the given server has wal_level=logical' : false }, async (t) => {
  const catalogueUrl = await createDatabase(given, 'bpcat')
  const config = nodeConfig(catalogueUrl, await freePort(), { BASEPLANE_HTTP_ENGINE: 'uws' })
  const platform = await startPlatform(config, catalogueUrl)
  t.teardown(async () => {
    await platform.stop()
    await dropCatalogue(given, catalogueUrl)
    fs.rmSync(config.home, { recursive: true, force: true })
  })
  const record = await createProject(platform.controlPlane, { name: 'No logical WAL' })
  const target: TestProject = { record, ref: record.ref, baseUrl: baseUrlOf(record.ref, config.publicUrl, config.baseDomain), anonKey: record.anonKey, serviceRoleKey: record.serviceRoleKey }
  await asOwner(target, 'create table public.items (id int primary key); grant select on public.items to anon; alter publication supabase_realtime add table public.items')
  const channel = client(t, target).channel('replica-only', { config: { broadcast: { self: true, ack: true } } })
  channel.on('postgres_changes' as never, { event: '*', schema: 'public', table: 'items' } as never, (() => {}) as never)
  const joined = await subscribed(channel)
  t.equal(joined.status, 'SUBSCRIBED')
  t.match(joined.system, { status: 'error', extension: 'postgres_changes', message: /wal_level set to logical \(it is replica\)/ })
  t.equal(await channel.send({ type: 'broadcast', event: 'still', payload: {} }), 'ok', 'broadcast works')
})
