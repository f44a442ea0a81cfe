// bench:fleet's failover case (issue 43): a Patroni-managed PostgreSQL 15 pair
// behind HAProxy (dev/patroni.ts), two real nodes under REST load (reads and
// writes through the anon key, 3 loops per node), the leader's host killed
// (Patroni and PostgreSQL, SIGKILL). Two forms: the catalogue and its projects
// on the pair, or the catalogue on the benchmark's server and the projects on
// the pair, added with addDatabaseServer. What it measures: answers, 503s and
// the time they span, anything else (a 500, a 405, a time-out: the goal is
// none), the first good answer after the kill and after HAProxy routed to the
// new leader, and acknowledged writes missing afterwards.
import pg from 'pg'
import { ControlPlane } from '../../control-plane/control-plane.ts'
import { createProject } from '../../control-plane/projects.ts'
import { addDatabaseServer } from '../../control-plane/server-admin.ts'
import { ownerUrlOf, type ProjectRecord } from '../../lib/catalogue.ts'
import { dropCatalogue } from '../../dev/db.ts'
import { haBinaries, startHaCluster, type HaBinaries } from '../../dev/patroni.ts'
import { benchCatalogue } from './platform.ts'
import { sharedStorage, startFleetNode, type FleetNode } from './fleet-node.ts'

export type FailoverWhere = 'catalogue' | 'project server'

export interface FailoverFigures {
  answered: number
  unavailable: number
  /** Answers neither good nor 503 with Retry-After, and one of them. */
  others: number
  otherSample?: string
  /** From the first 503's request to the last 503's answer. */
  outageMs: number
  /** From the kill to the first good answer of a request sent after the last 503. */
  firstGoodMs: number | undefined
  /**
   * From the moment the benchmark's own probe (a new session through HAProxy every 0.1 s) first landed on the
   * new leader to each node's first good answer, the later of the two; 0 when both answered before the probe saw it.
   */
  afterRoutedMs: number | undefined
  acknowledged: number
  lost: number
}

/** The binaries, or why the case cannot run here. */
export function failoverBinaries(): HaBinaries | { missing: string } {
  return haBinaries()
}

const ANSWER_BOUND_MS = 12_000
const SWITCH_LIMIT_MS = 60_000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Answer {
  node: number
  started: number
  ended: number
  status: number
  retryAfter: boolean
  text: string
  body?: string
}

async function addNotes(record: ProjectRecord): Promise<void> {
  const owner = new pg.Client({ connectionString: ownerUrlOf(record) })
  await owner.connect()
  try {
    await owner.query(`create table public.notes (id bigserial primary key, body text not null unique);
      alter table public.notes enable row level security;
      create policy notes_all on public.notes for all to anon using (true) with check (true);
      grant select, insert on public.notes to anon; grant usage on sequence public.notes_id_seq to anon;
      insert into public.notes (body) values ('before')`)
  } finally {
    await owner.end()
  }
}

export async function failoverCase(binaries: HaBinaries, where: FailoverWhere, benchServerUrl: string, nodeEnv: Record<string, string>): Promise<FailoverFigures> {
  const closers: Array<() => Promise<unknown>> = []
  try {
    const ha = await startHaCluster(binaries)
    closers.push(() => ha.stop())
    const catalogueUrl = await benchCatalogue(where === 'catalogue' ? ha.url : benchServerUrl)
    if (where === 'project server') closers.push(() => dropCatalogue(benchServerUrl, catalogueUrl))
    const controlPlane = await ControlPlane.open(catalogueUrl)
    closers.push(() => controlPlane.close())
    let record: ProjectRecord
    if (where === 'catalogue') {
      record = await createProject(controlPlane, { name: 'failover' })
    } else {
      await addDatabaseServer(controlPlane, { url: ha.url, id: 'patroni' })
      // A control plane that sees no room on the default server places on the added one.
      const placing = await ControlPlane.open(catalogueUrl, { defaultServerBudget: 1 })
      record = await createProject(placing, { name: 'failover' }).finally(() => placing.close())
      if (record.dbServer !== 'patroni') throw new Error(`the failover project was placed on ${record.dbServer}`)
    }
    await addNotes(record)
    const nodes: FleetNode[] = []
    for (const name of ['failover1', 'failover2']) {
      const node = await startFleetNode(name, catalogueUrl, { ...nodeEnv, ...sharedStorage(catalogueUrl) })
      nodes.push(node)
      closers.push(() => node.stop())
    }
    const base = (node: FleetNode) => `${node.origin}/project/${record.ref}/rest/v1/notes`
    const call = async (node: number, write: string | undefined): Promise<Answer> => {
      const started = performance.now()
      try {
        const answer = await fetch(write === undefined ? `${base(nodes[node]!)}?select=body&body=eq.before` : base(nodes[node]!), {
          method: write === undefined ? 'GET' : 'POST',
          headers: { apikey: record.anonKey, 'content-type': 'application/json', prefer: 'return=minimal' },
          body: write === undefined ? undefined : JSON.stringify({ body: write }),
          signal: AbortSignal.timeout(ANSWER_BOUND_MS),
        })
        const text = await answer.text()
        return { node, started, ended: performance.now(), status: answer.status, retryAfter: Number(answer.headers.get('retry-after')) > 0, text, body: write }
      } catch (error) {
        return { node, started, ended: performance.now(), status: 0, retryAfter: false, text: (error as Error).message, body: write }
      }
    }
    for (const [i] of nodes.entries()) {
      const first = await call(i, undefined)
      if (first.status !== 200) throw new Error(`${nodes[i]!.name} answered ${first.status} before the kill: ${first.text}`)
    }

    const answers: Answer[] = []
    let stop = false
    let n = 0
    const loop = async (node: number) => {
      while (!stop) {
        const answer = await call(node, n++ % 2 === 0 ? `w-${n}` : undefined)
        answers.push(answer)
        if (answer.status === 503) await sleep(100)
      }
    }
    const loops = Promise.all(nodes.flatMap((_, i) => [loop(i), loop(i), loop(i)]))
    let killedAt: number
    let routedAt: number
    const good = (a: Answer) => a.status === 200 || a.status === 201
    try {
      await sleep(1000)
      const killed = await ha.killLeader()
      killedAt = killed.at
      await ha.waitForLeader({ not: killed.name, limitMs: SWITCH_LIMIT_MS })
      routedAt = performance.now()
      const deadline = routedAt + SWITCH_LIMIT_MS
      while (performance.now() < deadline && !nodes.every((_, i) => answers.some((a) => a.node === i && a.started >= routedAt && good(a)))) await sleep(50)
      await sleep(1000)
    } finally {
      stop = true
      await loops
    }

    const unavailable = answers.filter((a) => a.status === 503 && a.retryAfter)
    const others = answers.filter((a) => !good(a) && !(a.status === 503 && a.retryAfter))
    const lastUnavailable = unavailable.at(-1)?.started ?? killedAt
    const goodAfter = answers.filter((a) => good(a) && a.started > lastUnavailable)
    const perNode = nodes.map((_, i) => goodAfter.filter((a) => a.node === i).map((a) => a.ended))
    const acknowledged = answers.filter((a) => a.status === 201).map((a) => a.body!)
    const check = new pg.Client({ connectionString: ownerUrlOf(record) })
    await check.connect()
    const { rows } = await check.query<{ body: string }>('select body from public.notes where body = any($1)', [acknowledged]).finally(() => check.end())
    return {
      answered: answers.length,
      unavailable: unavailable.length,
      others: others.length,
      otherSample: others[0] === undefined ? undefined : `${others[0].status} ${others[0].text.slice(0, 200)}`,
      outageMs: unavailable.length === 0 ? 0 : Math.max(...unavailable.map((a) => a.ended)) - Math.min(...unavailable.map((a) => a.started)),
      firstGoodMs: goodAfter.length === 0 ? undefined : Math.min(...goodAfter.map((a) => a.ended)) - killedAt,
      afterRoutedMs: perNode.some((t) => t.length === 0) ? undefined : Math.max(0, ...perNode.map((t) => Math.min(...t) - routedAt)),
      acknowledged: acknowledged.length,
      lost: acknowledged.length - rows.length,
    }
  } finally {
    for (const closer of closers.reverse()) await closer().catch((error: unknown) => console.error(`bench:fleet: failover: while finishing: ${(error as Error).message}`))
  }
}
