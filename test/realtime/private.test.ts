// Private channels (issue 38 item 2) and a project's limits (item 6) through
// the unmodified supabase-js: the project's own RLS policies on
// realtime.messages with realtime.topic(), as Supabase documents them, decide
// who may join (read) and who may send (write); a private room is not the
// public one of the same name; a private channel replays the broadcasts kept
// for it (realtime.send from SQL); and the plan's payload size and messages
// per second are refused with Realtime's reasons.
import pg from 'pg'
import t from 'tap'
import { resumeProject, suspendProject } from '../../control-plane/suspension.ts'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { REALTIME_LIMITS } from '../../lib/plans.ts'
import { eventually } from '../helpers/eventually.ts'
import { startTestPlatform } from '../helpers/platform.ts'
import { collect, realtimeClient, subscribed, userToken } from './helpers.ts'

const fixture = await startTestPlatform(t, { BASEPLANE_HTTP_ENGINE: 'uws' })
const project = await fixture.createProject({ name: 'Realtime private' })
const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
owner.on('error', () => {})
await owner.connect()
t.teardown(() => owner.end())
// The policies of Supabase's guide: members of a team read its rooms; only its writers send.
await owner.query(`
  create table public.members (user_id uuid not null, team text not null, writer boolean not null default false);
  grant select on public.members to authenticated;
  create policy "members read their team's rooms" on realtime.messages for select to authenticated
    using (exists (select 1 from public.members m where m.user_id = (select auth.uid()) and realtime.topic() = 'team:' || m.team));
  create policy "writers send to their team's rooms" on realtime.messages for insert to authenticated
    with check (exists (select 1 from public.members m where m.user_id = (select auth.uid()) and m.writer and realtime.topic() = 'team:' || m.team));
`)
const alice = crypto.randomUUID()
const bob = crypto.randomUUID()
const carol = crypto.randomUUID()
await owner.query(`insert into public.members (user_id, team, writer) values ($1, 'red', true), ($2, 'red', false)`, [alice, bob])

/** supabase-js signed in as `user` (its token fetched before any channel joins), on protocol 2.0.0. */
async function as(t: Parameters<typeof realtimeClient>[0], user: string) {
  const supabase = realtimeClient(t, project, '2.0.0', {}, userToken(project, { sub: user }))
  await supabase.realtime.setAuth()
  return supabase
}

t.test('a member joins the private room; a stranger is refused with Realtime\'s reason', async (t) => {
  const member = (await as(t, bob)).channel('team:red', { config: { private: true } })
  t.same(await subscribed(member), { status: 'SUBSCRIBED' })
  const stranger = (await as(t, carol)).channel('team:red', { config: { private: true } })
  t.same(await subscribed(stranger), { status: 'CHANNEL_ERROR', message: 'Unauthorized: You do not have permissions to read from this Channel topic: team:red' })
  const anonymous = realtimeClient(t, project).channel('team:red', { config: { private: true } })
  t.same(await subscribed(anonymous), { status: 'CHANNEL_ERROR', message: 'Unauthorized: You do not have permissions to read from this Channel topic: team:red' }, 'anon has no policy')
})

t.test('a writer\'s broadcast reaches the room; a reader\'s is dropped by the insert policy; the public room of the same name hears neither', async (t) => {
  const writer = (await as(t, alice)).channel('team:red', { config: { private: true, broadcast: { ack: true } } })
  const reader = (await as(t, bob)).channel('team:red', { config: { private: true, broadcast: { ack: true } } })
  const outsider = realtimeClient(t, project).channel('team:red')
  const heard = collect<unknown>((take) => reader.on('broadcast', { event: '*' }, (m) => take(m.payload)), 2, 2000)
  const writerHeard = collect<unknown>((take) => writer.on('broadcast', { event: '*' }, (m) => take(m.payload)), 1, 2000)
  const overheard = collect<unknown>((take) => outsider.on('broadcast', { event: '*' }, (m) => take(m.payload)), 1, 2000)
  t.same(await subscribed(writer), { status: 'SUBSCRIBED' })
  t.same(await subscribed(reader), { status: 'SUBSCRIBED' })
  t.same(await subscribed(outsider), { status: 'SUBSCRIBED' }, 'the public room is open to anyone')
  t.equal(await writer.send({ type: 'broadcast', event: 'said', payload: { n: 1 } }), 'ok')
  t.equal(await writer.send({ type: 'broadcast', event: 'said', payload: { n: 2 } }), 'ok')
  // Supabase Realtime drops a send its policies refuse without an answer: the client's ack times out.
  const refused = await reader.send({ type: 'broadcast', event: 'said', payload: { n: 3 } }, { timeout: 500 })
  t.equal(refused, 'timed out', 'the reader may not send')
  t.same(await heard, [{ n: 1 }, { n: 2 }], 'the reader hears the writer, in order')
  t.same(await writerHeard, [], 'and the writer never hears the reader')
  t.same(await overheard, [], 'the public team:red is another room')
})

t.test('replay: a private channel gets the broadcasts kept for it since `since`, marked replayed, oldest first', async (t) => {
  const since = Date.now() - 1000
  await owner.query(`select realtime.send('{"n": 1}'::jsonb, 'kept', 'team:red', true)`)
  await owner.query(`select realtime.send('{"n": 2}'::jsonb, 'kept', 'team:red', true)`)
  await owner.query(`select realtime.send('{"n": 0}'::jsonb, 'kept', 'team:blue', true)`)
  const ids = (await owner.query<{ id: string }>(`select id::text from realtime.messages where topic = 'team:red' and event = 'kept' order by inserted_at, id`)).rows.map((r) => r.id)
  const channel = (await as(t, bob)).channel('team:red', { config: { private: true, broadcast: { replay: { since, limit: 10 } } } })
  const replayed = collect<{ payload: unknown; meta?: unknown }>((take) => channel.on('broadcast', { event: 'kept' }, (m) => take({ payload: m.payload, meta: m.meta })), 2, 3000)
  t.same(await subscribed(channel), { status: 'SUBSCRIBED' })
  t.same(await replayed, [
    { payload: { n: 1 }, meta: { id: ids[0], replayed: true } },
    { payload: { n: 2 }, meta: { id: ids[1], replayed: true } },
  ])
  const limited = (await as(t, bob)).channel('team:red', { config: { private: true, broadcast: { replay: { since, limit: 1 } } } })
  const one = collect<unknown>((take) => limited.on('broadcast', { event: 'kept' }, (m) => take(m.payload)), 2, 1500)
  t.same(await subscribed(limited), { status: 'SUBSCRIBED' })
  t.same(await one, [{ n: 1 }], 'limit')
})

t.test('the plan\'s limits: a payload over its size is refused, and past its messages per second the channel is ended', async (t) => {
  const limits = REALTIME_LIMITS[project.record.plan]
  const a = realtimeClient(t, project).channel('limits', { config: { broadcast: { ack: true } } })
  const system = collect<{ message: string; status: string }>((take) => a.on('system', {}, take), 1, 5000)
  t.same(await subscribed(a), { status: 'SUBSCRIBED' })
  t.equal(await a.send({ type: 'broadcast', event: 'big', payload: { blob: 'x'.repeat(limits.payloadBytes) } }), 'error', 'over the payload size: an error, not delivered')
  const sends = []
  for (let i = 0; i <= limits.messagesPerSecond; i++) sends.push(a.send({ type: 'broadcast', event: 'flood', payload: { i } }, { timeout: 1000 }))
  await Promise.all(sends)
  t.match(await system, [{ message: 'Too many messages per second', status: 'error' }], 'the channel is told why, then closed')
})

t.test('kept messages: those past the three days a replay reaches are deleted as new ones arrive', async (t) => {
  await owner.query(`insert into realtime.messages (topic, extension, private, event, payload, inserted_at)
    select 'team:old', 'broadcast', true, 'old', '{}'::jsonb, timezone('utc', now()) - interval '4 days' from generate_series(1, 50)`)
  await owner.query(`insert into realtime.messages (topic, extension, private, event, payload, inserted_at) values ('team:old', 'broadcast', true, 'recent', '{}', timezone('utc', now()) - interval '2 days')`)
  // One insert statement in a hundred prunes: a thousand make it all but certain (0.99^1000 < 0.0001).
  for (let i = 0; i < 1000; i++) await owner.query(`select realtime.send('{}'::jsonb, 'new', 'team:new', true)`)
  const left = await owner.query<{ event: string; n: number }>(`select event, count(*)::int as n from realtime.messages where topic = 'team:old' group by event order by event`)
  t.same(left.rows, [{ event: 'recent', n: 1 }], 'the old ones are gone, the recent one stays')
})

t.test("a suspended project's sockets close with its reason; once resumed, realtime-js joins again", async (t) => {
  const suspended = await fixture.createProject({ name: 'Realtime suspended' })
  const closes: Array<{ code: number; reason: string }> = []
  // realtime-js tells its logger of each close of its socket, with the close event.
  const logger = (kind: string, message: string, data: { code?: number; reason?: string } | undefined) => {
    if (kind === 'transport' && message === 'close' && typeof data?.code === 'number') closes.push({ code: data.code, reason: data.reason ?? '' })
  }
  const supabase = realtimeClient(t, suspended, '2.0.0', { logger })
  const statuses: string[] = []
  const channel = supabase.channel('room')
  const joined = new Promise<void>((resolve) =>
    channel.subscribe((status) => {
      statuses.push(status)
      if (status === 'SUBSCRIBED') resolve()
    }),
  )
  await joined
  await suspendProject(fixture.platform.controlPlane, suspended.ref, 'abuse report')
  // A 1006 as the first socket opens is the known one (docs/realtime.md): the close looked for is the suspension's.
  const closed = await eventually('the socket closed', 10000, async () => closes.find((close) => close.code !== 1006))
  t.same(closed, { code: 4403, reason: 'project_suspended: This project is suspended; its operator can resume it' })
  await resumeProject(fixture.platform.controlPlane, suspended.ref)
  await eventually('the channel joined again', 15000, async () => statuses.filter((s) => s === 'SUBSCRIBED').length >= 2)
  t.pass('realtime-js reconnected and rejoined once the project was resumed')
})

const walLevel = (await owner.query<{ wal_level: string }>('show wal_level')).rows[0]!.wal_level
const noLogical = walLevel === 'logical' ? false : `the database server has wal_level=${walLevel}: the project's change reader, which delivers what SQL inserts into realtime.messages, needs logical (CI's embedded server has it)`

t.test('broadcast_changes() from a trigger, and a message kept with persist, reach the private room with their ids', { skip: noLogical }, async (t) => {
  await owner.query(`
    create table public.scores (id bigint primary key, team text not null, points int not null);
    create function public.scores_broadcast() returns trigger language plpgsql security definer as $$
    begin
      perform realtime.broadcast_changes('team:' || new.team, tg_op, tg_op, tg_table_name, tg_table_schema, new, old);
      return null;
    end $$;
    create trigger scores_broadcast after insert or update on public.scores for each row execute function public.scores_broadcast();
  `)
  const member = (await as(t, bob)).channel('team:red', { config: { private: true } })
  const heard = collect<{ event: string; payload: Record<string, unknown>; meta?: { id?: string } }>(
    (take) => member.on('broadcast', { event: '*' }, (m) => take({ event: m.event, payload: m.payload, meta: m.meta })),
    2,
    // The wait starts before the join and the reader's start, which take seconds on a loaded machine; it ends on the second message.
    30000,
  )
  t.same(await subscribed(member), { status: 'SUBSCRIBED' })
  // The project's change reader starts with its first channel: what is committed before its slot exists is not read.
  // A slot alone does not say so (the reader ended with the suspension above may still hold its own a moment):
  // the reader streams once a probe sent from SQL to a public room is heard.
  const probes = (await as(t, bob)).channel('probe-room')
  let probed = false
  probes.on('broadcast', { event: 'probe' }, () => void (probed = true))
  t.same(await subscribed(probes), { status: 'SUBSCRIBED' })
  await eventually('the reader to stream', 20000, async () => {
    if (!probed) await owner.query(`select realtime.send('{}'::jsonb, 'probe', 'probe-room', false)`)
    return probed
  }, 250)
  await owner.query(`insert into public.scores (id, team, points) values (1, 'red', 3)`)
  const writer = await as(t, alice)
  t.same(await writer.channel('team:red', { config: { private: true } }).httpSend('note', { text: 'kept' }, { persist: true }), { success: true })
  const got = await heard
  t.match(got[0], { event: 'INSERT', payload: { operation: 'INSERT', table: 'scores', schema: 'public', record: { id: 1, team: 'red', points: 3 }, old_record: null } })
  t.match(got[1], { event: 'note', payload: { text: 'kept' } })
  const ids = (await owner.query<{ id: string }>(`select id::text from realtime.messages where topic = 'team:red' and event in ('INSERT', 'note') order by inserted_at`)).rows.map((r) => r.id)
  t.same(got.map((m) => m.meta?.id), ids, 'each with the id of its row, for replay')
})
