// A rolling upgrade across a catalogue migration (issue 43 item 6), with the
// commit before the newest catalogue migration checked out beside this one:
// an old node migrates a new catalogue and serves under load; a new node
// starts on the same catalogue and migrates the rest under the migrations'
// lock while the old one keeps answering right (200 with the right rows, or a
// 503 with Retry-After, never a 500 or other rows); a change made through the
// new node reaches the old one; the old node, stopped with requests in flight,
// finishes them; a second old node refuses to start on the newer catalogue
// with the message docs/fleet.md ("Rolling upgrade") gives.
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { freePort } from '../../lib/db/embedded.ts'
import { migrationsOf } from '../../lib/db/migrations.ts'
import { dropCatalogue } from '../../dev/db.ts'
import { adminQuery, freshDatabase, serverUrl } from '../helpers/db.ts'
import { request } from '../helpers/http.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
/** A node from source through tsx (its worker threads too) on a loaded 2-core machine. */
const START_TIMEOUT_MS = 120_000
const ADMIN_TOKEN = 'rolling-upgrade-admin-token-of-at-least-32-chars'

function git(...args: string[]): string {
  return execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
}

/** The commit before the newest catalogue migration, or why there is none to test against. */
function previousCommit(): { commit: string } | { skip: string } {
  try {
    git('rev-parse', '--is-inside-work-tree')
  } catch {
    return { skip: 'not in a git checkout: the previous commit cannot be checked out' }
  }
  try {
    // The newest commit that added a catalogue migration (an edit of a comment in one is no migration to cross).
    const newest = git('log', '-1', '--diff-filter=A', '--format=%H', '--', 'sql/catalogue/')
    if (newest === '') return { skip: 'no commit touches sql/catalogue/ (a shallow clone?)' }
    return { commit: git('rev-parse', '--verify', `${newest}^`) }
  } catch (error) {
    return { skip: `the commit before the newest catalogue migration is not in this clone (a shallow clone?): ${(error as Error).message.split('\n')[0]}` }
  }
}

/** A dependency of the old commit's package.json missing from this node_modules: the old code could not load. */
function missingDependency(oldRoot: string): string | undefined {
  const pkg = JSON.parse(fs.readFileSync(path.join(oldRoot, 'package.json'), 'utf8')) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string> }
  return Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).find((name) => !fs.existsSync(path.join(ROOT, 'node_modules', name, 'package.json')))
}

interface Node {
  origin: string
  output(): string
  /** SIGTERM, and the exit code. */
  stop(): Promise<number | null>
}

/** `baseplane start --no-demo` of the checkout at `root`, on the catalogue; rejects with its output when it exits before it serves. */
async function startNode(t: { teardown(fn: () => unknown): void }, root: string, catalogue: string, storage: string): Promise<Node> {
  const port = await freePort()
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-rolling-'))
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'start', '--no-demo'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: catalogue,
      PORT: String(port),
      BASEPLANE_HOME: home,
      BASEPLANE_ADMIN_TOKEN: ADMIN_TOKEN,
      BASEPLANE_STORAGE_ROOT: storage,
      BASEPLANE_LOG_LEVEL: 'info',
      // npm test says the build is current (test/run.ts) for this checkout; the previous commit's has no build, so its threads load its sources.
      BASEPLANE_THREADS_FROM_BUILD: fs.existsSync(path.join(root, 'dist', 'workers')) ? (process.env.BASEPLANE_THREADS_FROM_BUILD ?? '') : '0',
      BASEPLANE_AUTH_THREADS: '1',
      BASEPLANE_GRAPHQL_THREADS: '1',
      BASEPLANE_REST_THREADS: '1',
      BASEPLANE_PUSH_THREADS: '1',
      BASEPLANE_STORAGE_THREADS: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      fs.rmSync(home, { recursive: true, force: true })
      resolve(code)
    }),
  )
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    return exited
  }
  t.teardown(async () => {
    const late = setTimeout(() => child.kill('SIGKILL'), 30_000)
    await stop()
    clearTimeout(late)
  })
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the node did not start within ${START_TIMEOUT_MS} ms:\n${output}`)), START_TIMEOUT_MS)
    const ready = () => {
      if (!output.includes('Press Ctrl-C to stop.')) return
      clearTimeout(timer)
      resolve()
    }
    child.stdout!.on('data', ready)
    void exited.then((code) => {
      clearTimeout(timer)
      reject(Object.assign(new Error(`the node exited with code ${code} before it served:\n${output}`), { code, output }))
    })
  })
  return { origin: `http://127.0.0.1:${port}`, output: () => output, stop }
}

const ITEMS = [
  { id: 1, name: 'one' },
  { id: 2, name: 'two' },
  { id: 3, name: 'three' },
]

interface Tally {
  right: number
  unavailable: number
  wrong: string[]
}

/** One REST read and one GraphQL read; each answer counted as right (200, these rows), 503 with Retry-After, or wrong. */
async function readOnce(base: string, anon: string, rows: typeof ITEMS, tally: Tally): Promise<void> {
  const headers = { apikey: anon, authorization: `Bearer ${anon}` }
  const answers = await Promise.all([
    request(`${base}/rest/v1/items?select=id,name&order=id`, { headers }).then((reply) => ({ reply, data: reply.json })),
    request<{ data?: { itemsCollection?: { edges: Array<{ node: unknown }> } } }>(`${base}/graphql/v1`, {
      headers,
      body: { query: '{ itemsCollection(first: 3, orderBy: [{ id: AscNullsLast }]) { edges { node { id name } } } }' },
    }).then((reply) => ({ reply, data: reply.json?.data?.itemsCollection?.edges.map((edge) => edge.node) })),
  ]).catch((error: Error) => [{ reply: { status: 0, headers: {} as Record<string, string>, text: error.message }, data: undefined }])
  for (const [i, { reply, data }] of answers.entries()) {
    // The Data API's max rows (changed below) does not bound GraphQL's page.
    const expected = i === 0 ? rows : ITEMS
    if (reply.status === 200 && JSON.stringify(data) === JSON.stringify(expected)) tally.right++
    else if (reply.status === 503 && Number(reply.headers['retry-after']) > 0) tally.unavailable++
    else tally.wrong.push(`${reply.status} ${reply.text.slice(0, 200)}`)
  }
}

/** Reads from `base` in a loop (two at a time) until `until` settles. */
async function underLoad(base: string, anon: string, rows: typeof ITEMS, until: Promise<unknown>): Promise<Tally> {
  const tally: Tally = { right: 0, unavailable: 0, wrong: [] }
  let done = false
  void until.finally(() => (done = true)).catch(() => {})
  const loop = async () => {
    while (!done) await readOnce(base, anon, rows, tally)
  }
  await Promise.all([loop(), loop()])
  return tally
}

const previous = previousCommit()
if ('skip' in previous) {
  t.test('old and new nodes on one catalogue across its migration', { skip: previous.skip }, () => {})
} else {
  const oldRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-previous-'))
  fs.rmdirSync(oldRoot)
  git('worktree', 'add', '--detach', oldRoot, previous.commit)
  t.teardown(() => {
    git('worktree', 'remove', '--force', oldRoot)
  })
  const missing = missingDependency(oldRoot)
  const oldNewest = Math.max(...fs.readdirSync(path.join(oldRoot, 'sql/catalogue')).filter((f) => /^\d{4}_/.test(f)).map((f) => Number(f.slice(0, 4))))
  const newNewest = migrationsOf('catalogue').at(-1)!.version
  if (missing !== undefined) {
    t.test('old and new nodes on one catalogue across its migration', { skip: `the previous commit (${previous.commit.slice(0, 10)}) needs ${missing}, which this checkout's node_modules lacks` }, () => {})
  } else {
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(oldRoot, 'node_modules'), 'dir')
    t.comment(`previous commit ${previous.commit.slice(0, 10)}: catalogue migrations up to ${oldNewest}; this one: up to ${newNewest}`)

    t.test('old and new nodes on one catalogue across its migration', async (t) => {
      t.ok(newNewest > oldNewest, 'the previous commit knows fewer catalogue migrations')
      const server = await serverUrl()
      const catalogue = await freshDatabase(t, 'bprolling')
      t.teardown(() => dropCatalogue(server, catalogue))
      const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-rolling-storage-'))
      t.teardown(() => fs.rmSync(storage, { recursive: true, force: true }))
      const ledger = async () => (await adminQuery<{ version: number }>(catalogue, `select version from baseplane.migrations where migration_set = 'catalogue' order by version`)).rows.map((r) => r.version)

      const old1 = await startNode(t, oldRoot, catalogue, storage)
      t.equal(Math.max(...(await ledger())), oldNewest, 'the old node migrated the catalogue to its version')

      const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
      const created = await request<{ ref: string; anon_key: string }>(`${old1.origin}/platform/v1/projects`, { headers: admin, body: { name: 'rolling' } })
      t.equal(created.status, 201, 'the old node creates a project')
      const { ref } = created.json
      const keys = await request<{ anon_key: string; base_url: string }>(`${old1.origin}/platform/v1/projects/${ref}/keys`, { headers: admin })
      t.equal(keys.status, 200, 'and gives its keys')
      const anon = keys.json.anon_key
      // The owner's SQL over the project's database URL: the old commit may predate the admin API's migrations.
      const dbUrl = await request<{ db_url: string }>(`${old1.origin}/platform/v1/projects/${ref}/db-url`, { headers: admin })
      t.equal(dbUrl.status, 200, dbUrl.text)
      await adminQuery(
        dbUrl.json.db_url,
        `create table public.items (id int primary key, name text not null);
         insert into public.items values ${ITEMS.map((item) => `(${item.id}, '${item.name}')`).join(', ')};
         grant select on public.items to anon;
         create function public.slow() returns int language sql as 'select pg_sleep(1.5); select 1';
         grant execute on function public.slow() to anon;`,
      )
      const oldBase = `${old1.origin}/project/${ref}`
      const first: Tally = { right: 0, unavailable: 0, wrong: [] }
      await readOnce(oldBase, anon, ITEMS, first)
      t.same(first, { right: 2, unavailable: 0, wrong: [] }, 'the old node serves the project')

      // The new node starts (and migrates) while the old one answers two readers in a loop.
      const starting = startNode(t, ROOT, catalogue, storage)
      const during = await underLoad(oldBase, anon, ITEMS, starting)
      const fresh = await starting
      t.same(await ledger(), migrationsOf('catalogue').map((m) => m.version), 'the new node applied the rest, each once')
      t.same(during.wrong, [], 'no wrong answer from the old node while the new one migrated')
      t.ok(during.right > 0, `the old node answered meanwhile (${during.right} right, ${during.unavailable} 503)`)

      const newBase = `${fresh.origin}/project/${ref}`
      const both = await underLoad(oldBase, anon, ITEMS, (async () => {
        const onNew: Tally = { right: 0, unavailable: 0, wrong: [] }
        for (let i = 0; i < 5; i++) await readOnce(newBase, anon, ITEMS, onNew)
        t.same(onNew, { right: 10, unavailable: 0, wrong: [] }, 'the new node serves the project')
      })())
      t.same(both.wrong, [], 'the old node answers right beside the new one')

      // A change made through the new node: the old node reads the project's row again, from the migrated table.
      const patched = await request(`${fresh.origin}/platform/v1/projects/${ref}/rest`, { method: 'PATCH', headers: admin, body: { max_rows: 2 } })
      t.equal(patched.status, 200, patched.text)
      t.notOk(patched.headers['baseplane-unacknowledged-nodes'], 'both nodes acknowledged the change')
      const after: Tally = { right: 0, unavailable: 0, wrong: [] }
      for (let i = 0; i < 3; i++) await readOnce(oldBase, anon, ITEMS.slice(0, 2), after)
      t.same(after.wrong, [], 'the old node applies the change made by the new one')
      t.equal(after.right, 6)

      // The old node stops with requests in flight: each finishes.
      const inFlight = Array.from({ length: 4 }, () => request(`${oldBase}/rest/v1/rpc/slow`, { headers: { apikey: anon, authorization: `Bearer ${anon}` }, body: {} }))
      await new Promise((resolve) => setTimeout(resolve, 500))
      const stopped = old1.stop()
      const replies = await Promise.all(inFlight)
      t.same(replies.map((reply) => `${reply.status} ${reply.text}`), Array(4).fill('200 1'), 'requests in flight on the stopping node finish')
      t.equal(await stopped, 0, 'the old node drained and exited 0')

      // A second old node on the newer catalogue refuses to start, naming both versions and what to do.
      const refused = await startNode(t, oldRoot, catalogue, storage).then(
        () => undefined,
        (error: { code?: number | null; output?: string }) => error,
      )
      t.ok(refused, 'the old node does not start')
      t.equal(refused?.code, 1, 'it exits 1')
      t.match(
        refused?.output ?? '',
        `the catalogue database was migrated by a newer Baseplane (its migration ${newNewest}; this one knows up to ${oldNewest}): start this node with the fleet's newer version`,
      )
      const still: Tally = { right: 0, unavailable: 0, wrong: [] }
      await readOnce(newBase, anon, ITEMS.slice(0, 2), still)
      t.same(still, { right: 2, unavailable: 0, wrong: [] }, 'the new node kept serving')
    })
  }
}
