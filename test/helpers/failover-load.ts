// REST load across a failover, for the Patroni tests (test/helpers/patroni.ts):
// reads and writes of one project on every node (3 loops each) while a cause
// (a kill, a switchover) runs, every answer kept, then what must hold of them
// (only 200, 201 or 503 with Retry-After; none slower than a bound; every
// acknowledged write present) and the figures docs/fleet.md quotes.
import pg from 'pg'
import type { Test } from 'tap'
import type { HaCluster } from './patroni.ts'

/** No request may take longer than this, outage or not (the longest round-trip deadline is a role's statement timeout plus 2 s). */
export const ANSWER_BOUND_MS = 12_000
/** Load keeps running this long after every node answered again, to see that they stay up. */
const AFTER_MS = 2_000

export interface Answer {
  node: number
  kind: 'read' | 'write'
  started: number
  ended: number
  status: number
  retryAfter: string | null
  text: string
  body?: string
}

export async function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<{ status: number; retryAfter: string | null; text: string }> {
  const answer = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(ANSWER_BOUND_MS),
  })
  return { status: answer.status, retryAfter: answer.headers.get('retry-after'), text: await answer.text() }
}

/** The table the load reads and writes, made as the project's owner; one row, 'before'. */
export async function addNotes(ownerUrl: string): Promise<void> {
  const owner = new pg.Client({ connectionString: ownerUrl })
  await owner.connect()
  try {
    await owner.query(`
      create table public.notes (id bigserial primary key, body text not null unique);
      alter table public.notes enable row level security;
      create policy notes_all on public.notes for all to anon using (true) with check (true);
      grant select, insert on public.notes to anon; grant usage on sequence public.notes_id_seq to anon;
      insert into public.notes (body) values ('before');
    `)
  } finally {
    await owner.end()
  }
}

/** The read every load loop repeats: the statement REST prepares for it is prepared before the switch and used after. */
export const preparedRead = (base: string) => `${base}/rest/v1/notes?select=body&body=eq.before`

/** Numbers the writes of every load in this process, so each acknowledged one can be looked for. */
let n = 0

const good = (a: Answer) => a.status === 200 || a.status === 201
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export interface LoadTarget {
  ha: HaCluster
  /** The project's base URL on each node. */
  bases: string[]
  anonKey: string
  /** A switch longer than this fails the test. */
  switchLimitMs: number
}

function load(target: LoadTarget, done: Promise<unknown>): Promise<Answer[]> {
  const answers: Answer[] = []
  let stop = false
  void done.finally(() => (stop = true))
  const anon = { apikey: target.anonKey }
  const loop = async (node: number) => {
    while (!stop) {
      const write = n % 2 === 0
      const body = write ? `w-${process.pid}-${n}` : undefined
      n++
      const started = performance.now()
      const base = target.bases[node]!
      const answer = await (write ? call(`${base}/rest/v1/notes`, { headers: { ...anon, prefer: 'return=minimal' }, body: { body } }) : call(preparedRead(base), { headers: anon })).catch(
        (error: Error) => ({ status: 0, retryAfter: null, text: `${error.name}: ${error.message}` }),
      )
      answers.push({ node, kind: write ? 'write' : 'read', started, ended: performance.now(), ...answer, body })
      // A 503 is retried after a pause, as a client honouring Retry-After would (not its full length: the test measures).
      if (answer.status === 503) await sleep(100)
    }
  }
  return Promise.all(target.bases.flatMap((_, i) => [loop(i), loop(i), loop(i)])).then(() => answers)
}

/** Load across `cause` (a kill or a switchover): the answers, the moment of the cause, and when each node answered again (polled beside the load). */
export async function across(t: Test, target: LoadTarget, cause: () => Promise<{ at: number; from: string }>): Promise<{ answers: Answer[]; at: number; firstGood: number[] }> {
  let finish!: () => void
  const done = new Promise<void>((resolve) => (finish = resolve))
  const running = load(target, done)
  try {
    await sleep(1000)
    const { at, from } = await cause()
    const leader = await target.ha.waitForLeader({ not: from, limitMs: target.switchLimitMs })
    t.not(leader, from, `${leader} leads now`)
    const deadline = performance.now() + target.switchLimitMs
    const firstGood: number[] = []
    for (const base of target.bases) {
      while (performance.now() < deadline) {
        const answer = await call(preparedRead(base), { headers: { apikey: target.anonKey } }).catch(() => undefined)
        if (answer?.status === 200) break
        await sleep(50)
      }
      firstGood.push(performance.now())
    }
    await sleep(AFTER_MS)
    finish()
    return { answers: await running, at, firstGood }
  } finally {
    finish()
    await running
  }
}

/** What must hold of the answers, and a comment with the figures. */
export function report(t: Test, what: string, answers: Answer[], at: number, nodes: number): void {
  const after = answers.filter((a) => a.ended >= at)
  const unavailable = after.filter((a) => a.status === 503)
  const others = answers.filter((a) => !good(a) && a.status !== 503)
  t.same(others.map((a) => `${a.kind} ${a.status} ${a.text.slice(0, 200)}`), [], 'every answer is 200, 201 or 503: no 500, no 405, no hang')
  t.same(unavailable.filter((a) => !(Number(a.retryAfter) > 0)).map((a) => a.text.slice(0, 200)), [], 'every 503 has Retry-After')
  const slowest = answers.reduce((a, b) => (b.ended - b.started > a.ended - a.started ? b : a))
  const slowestMs = slowest.ended - slowest.started
  t.ok(
    slowestMs < ANSWER_BOUND_MS,
    `the slowest answer took ${(slowestMs / 1000).toFixed(2)} s (bound ${ANSWER_BOUND_MS / 1000} s): a ${slowest.kind}, ${slowest.status}, sent ${((slowest.started - at) / 1000).toFixed(2)} s after the ${what}`,
  )
  for (let node = 0; node < nodes; node++) {
    const last = answers.filter((a) => a.node === node).at(-1)
    t.ok(last && good(last), `node ${node + 1}'s last answer under load was good (${last?.status})`)
  }
  const firstGoodAfter = after.filter((a) => good(a) && a.started > (unavailable.at(-1)?.started ?? at)).map((a) => a.ended)
  const span = unavailable.length === 0 ? 0 : Math.max(...unavailable.map((a) => a.ended)) - Math.min(...unavailable.map((a) => a.started))
  const firstGood = firstGoodAfter.length === 0 ? undefined : Math.min(...firstGoodAfter) - at
  t.comment(
    `${what}: ${answers.length} answered (${answers.filter(good).length} good), ${unavailable.length} x 503 over ${(span / 1000).toFixed(2)} s, ` +
      `first good answer after the last 503 ${firstGood === undefined ? 'n/a' : `${(firstGood / 1000).toFixed(2)} s`} after the ${what}`,
  )
}

/** Every write answered 201 is in the table (read through `ownerUrl`, on whichever server leads now). */
export async function acknowledgedPresent(t: Test, answers: Answer[], ownerUrl: string): Promise<void> {
  const acknowledged = answers.filter((a) => a.kind === 'write' && a.status === 201).map((a) => a.body!)
  t.ok(acknowledged.length > 0, `${acknowledged.length} writes acknowledged`)
  const check = new pg.Client({ connectionString: ownerUrl })
  await check.connect()
  try {
    const { rows } = await check.query<{ body: string }>('select body from public.notes where body = any($1)', [acknowledged])
    const present = new Set(rows.map((r) => r.body))
    t.same(acknowledged.filter((body) => !present.has(body)), [], 'every acknowledged write is on the new primary')
  } finally {
    await check.end()
  }
}
