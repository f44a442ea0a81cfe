// `Prefer: timezone=<name>` as PostgREST honours it: the request's
// transaction takes the zone (timestamps read and written in it, functions
// see it), echoed in Preference-Applied; a zone PostgreSQL does not know is
// ignored, or PGRST122 under handling=strict; the zone never outlives its
// request on a pooled connection.
import t from 'tap'
import { restProject } from './helpers.ts'

const f = await restProject(t, `
  create table events (id int primary key, at timestamptz not null);
  insert into events values (1, '2024-01-01T00:00:00Z');
  grant select, insert on events to anon;
  create function zone() returns text language sql stable as $$ select current_setting('timezone') $$;
  grant execute on function zone() to anon;
`)
const zoneOf = async () => {
  const r = await f.raw<string>('/rpc/zone')
  if (r.status !== 200) throw new Error(`zone: ${r.status}`)
  return r.json
}
const serverZone = await zoneOf()

t.test('a read in the zone asked for', async (t) => {
  // Twice: the first request plans the schema, the second runs in one message on it.
  for (let i = 0; i < 2; i++) {
    const r = await f.raw<Array<{ at: string }>>('/events?select=at', { headers: { prefer: 'timezone=America/Los_Angeles' } })
    t.equal(r.status, 200)
    t.same(r.json, [{ at: '2023-12-31T16:00:00-08:00' }])
    t.equal(r.headers['preference-applied'], 'timezone=America/Los_Angeles')
  }
  const alias = await f.raw<Array<{ at: string }>>('/events?select=at', { headers: { prefer: 'timezone=Asia/Tokyo, count=exact' } })
  t.same(alias.json, [{ at: '2024-01-01T09:00:00+09:00' }])
  t.equal(alias.headers['preference-applied'], 'count=exact, timezone=Asia/Tokyo', "PostgREST's order")
  const fn = await f.raw<string>('/rpc/zone', { headers: { prefer: 'timezone=Europe/Berlin' } })
  t.equal(fn.json, 'Europe/Berlin')
  t.equal(await zoneOf(), serverZone, 'the next request on the connection is in the server zone again')
})

t.test('a write in the zone asked for', async (t) => {
  const s = f.anon()
  const written = await s.from('events').insert({ id: 2, at: '2024-06-01 12:00:00' }).select('at').setHeader('prefer', 'return=representation, timezone=Europe/Paris')
  t.equal(written.error, null)
  t.same(written.data, [{ at: '2024-06-01T12:00:00+02:00' }], 'a time without a zone is read as Paris time')
  t.equal((await f.sql(`select at = '2024-06-01T10:00:00Z' as utc from events where id = 2`)).rows[0].utc, true)
  const minimal = await f.raw('/events', { method: 'POST', headers: { prefer: 'timezone=Asia/Kolkata' }, body: { id: 3, at: '2024-06-01 12:00:00' } })
  t.equal(minimal.status, 201)
  t.equal(minimal.headers['preference-applied'], 'timezone=Asia/Kolkata')
  t.equal((await f.sql(`select at = '2024-06-01T06:30:00Z' as utc from events where id = 3`)).rows[0].utc, true)
})

t.test('an unknown zone is ignored, or refused under handling=strict', async (t) => {
  const ignored = await f.raw<Array<{ at: string }>>('/events?select=at&id=eq.1', { headers: { prefer: 'timezone=Mars/Olympus' } })
  t.equal(ignored.status, 200)
  t.same(ignored.json, [{ at: await f.raw<Array<{ at: string }>>('/events?select=at&id=eq.1').then((r) => r.json[0]!.at) }])
  t.equal(ignored.headers['preference-applied'], undefined, 'not echoed')
  const strict = await f.raw('/events?select=at', { headers: { prefer: 'handling=strict, timezone=Mars/Olympus' } })
  t.equal(strict.status, 400)
  t.same(strict.json, { code: 'PGRST122', details: 'Invalid preferences: timezone=Mars/Olympus', hint: null, message: 'Invalid preferences given with handling=strict' })
  const refusedWrite = await f.raw('/events', { method: 'POST', headers: { prefer: 'handling=strict, timezone=Nowhere' }, body: { id: 4, at: '2024-01-01' } })
  t.equal(refusedWrite.status, 400)
  t.equal((await f.sql('select count(*)::int as n from events where id = 4')).rows[0].n, 0, 'nothing written')
  const strictKnown = await f.raw('/events?select=id&id=eq.1', { headers: { prefer: 'handling=strict, timezone=UTC' } })
  t.equal(strictKnown.status, 200)
  t.equal(strictKnown.headers['preference-applied'], 'handling=strict, timezone=UTC')
  const quoted = await f.raw('/events?select=id&id=eq.1', { headers: { prefer: "timezone=x', true); drop table events; --" } })
  t.equal(quoted.status, 200, 'a name is only ever compared, never spliced')
  t.equal((await f.sql('select count(*)::int as n from events')).rows[0].n, 3)
})
