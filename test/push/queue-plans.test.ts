// The plans of the two statements every notification passes through: the
// fan-out (insert into push.messages) and the actor's claim. Both must find
// rows by index however stale the statistics are; left to the planner, a
// multi-row insert hashed all of push.devices and a claim sorted every due
// row and hashed all of push.messages (tens of milliseconds a batch, growing
// with the tables). The plans are read with auto_explain at NOTICE level.
import t from 'tap'
import pg from 'pg'
import { adminUrlFor } from '../../lib/db/server-url.ts'
import { beginBatch, claimDeliveries } from '../../workers/push/queue/claim.ts'
import { pushFixture } from './helpers.ts'

const DEVICES = 3000
const MESSAGES = 2000

t.test('fan-out and claim look rows up by index, with statistics taken on empty tables', async (t) => {
  const fx = await pushFixture(t, { plan: 'business' })
  await fx.admin(
    `insert into push.devices (platform, token, user_id)
     select 'apns', md5(g::text) || md5(g::text), gen_random_uuid() from generate_series(1, $1::int) g`,
    [DEVICES],
  )
  // Statistics that say the queue and the messages are empty: the worst case for the planner.
  await fx.admin('analyze push.queue; analyze push.messages')

  const client = new pg.Client({ connectionString: adminUrlFor(fx.server, fx.project.dbName) })
  await client.connect()
  t.teardown(() => client.end())
  const plans: string[] = []
  client.on('notice', (notice) => {
    if (notice.message?.includes('plan:')) plans.push(`${notice.message}\n${(notice as { detail?: string }).detail ?? ''}`)
  })
  await client.query(`load 'auto_explain'`)
  await client.query(`set auto_explain.log_min_duration = 0; set auto_explain.log_nested_statements = on; set auto_explain.log_level = notice`)

  await client.query(`begin; set local role service_role`)
  await client.query(
    `insert into push.messages (device_id, title) select id, 'plan' from push.devices order by id limit $1`,
    [MESSAGES],
  )
  await client.query('commit')
  const fanOut = plans.find((p) => p.includes('Insert on queue'))
  t.ok(fanOut, 'the fan-out statement was explained')
  t.match(fanOut, /Index Scan using devices_pkey/, 'each message finds its device by primary key')
  t.notMatch(fanOut, /Seq Scan on devices|Hash Join/, 'no pass over all devices')
  t.equal((await fx.admin('select count(*)::int as n from push.queue')).rows[0].n, MESSAGES, 'one queue row per message')

  plans.length = 0
  await beginBatch(client)
  const rows = await claimDeliveries(client, ['apns'], 500)
  await client.query('rollback')
  t.equal(rows.length, 500, 'a full batch')
  t.ok(rows.every((r) => r.messageFound && r.deviceActive && r.token.length === 64), 'each row with its message and device')
  const claim = plans.find((p) => p.includes('LockRows'))
  t.ok(claim, 'the claim was explained')
  t.match(claim, /Index Scan using queue_due on queue/, 'due rows are read in index order')
  t.notMatch(claim, /Sort Key: q\.run_at/, 'not every due row sorted to take the first 500')
  t.notMatch(claim, /Seq Scan on (messages|devices)|Hash Join/, 'message and device by index lookups')
  t.notMatch(claim, /JIT/, 'no JIT compilation')
})
