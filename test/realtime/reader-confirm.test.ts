// The change reader confirms exactly what the server sent it, never one past
// it: a walsender ending (its server shutting down cleanly, a restart, a
// Patroni switchover) waits until its client's flush position equals what it
// sent, and pg-logical-replication's acknowledge(lsn) reports lsn + 1, which
// held a switchover under a Realtime reader until wal_sender_timeout (60 s;
// Patroni gave up with "Switchover status unknown"; found by
// test/platform/patroni-project-server.test.ts). Logical decoding needs
// wal_level=logical: where the given server lacks it, an embedded PostgreSQL
// of this file's own.
import pg from 'pg'
import t from 'tap'
import { startTemporary } from '../../lib/db/embedded.ts'
import { lsnBefore, ProjectReader } from '../../workers/realtime/changes/project-reader.ts'
import type { ReaderStatus } from '../../workers/realtime/changes/messages.ts'
import { adminQuery, freshDatabase, serverUrl } from '../helpers/db.ts'

const given = await serverUrl()
const level = (await adminQuery<{ wal_level: string }>(given, 'show wal_level')).rows[0]!.wal_level
if (level !== 'logical') {
  const own = await startTemporary()
  t.teardown(() => own.stop())
  process.env.DATABASE_URL = own.url
}

const until = async (check: () => Promise<boolean>, ms: number): Promise<boolean> => {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return false
}

t.test('lsnBefore', async (t) => {
  t.same([lsnBefore('16/B374D848'), lsnBefore('1/0'), lsnBefore('0/1'), lsnBefore('0/0')], ['16/B374D847', '0/FFFFFFFF', '0/0', undefined])
})

t.test('the reader reports as flushed exactly what it was sent', async (t) => {
  const database = await freshDatabase(t, 'bpconfirm')
  await adminQuery(database, `create table public.items (id int primary key);
    create publication supabase_realtime for table public.items; create publication supabase_realtime_messages_publication`)
  const statuses: ReaderStatus[] = []
  const reader = new ProjectReader('confirm', async () => ({ url: database, release: () => {} }), { batch: () => {}, status: (s) => void statuses.push(s) })
  reader.start()
  t.teardown(() => reader.stop())
  t.ok(await until(async () => statuses.some((s) => s.state === 'streaming'), 15_000), 'the reader streams')
  await adminQuery(database, 'insert into public.items select generate_series(1, 10)')
  const watch = new pg.Client({ connectionString: database })
  await watch.connect()
  t.teardown(() => watch.end())
  let last = ''
  const equal = await until(async () => {
    const { rows } = await watch.query<{ sent: string; flush: string | null }>(
      `select sent_lsn::text as sent, flush_lsn::text as flush from pg_stat_replication where application_name = 'baseplane-realtime-confirm'`,
    )
    last = JSON.stringify(rows)
    return rows.length === 1 && rows[0]!.flush === rows[0]!.sent
  }, 10_000)
  t.ok(equal, `flush_lsn reaches sent_lsn, not one past it (${last})`)
})
