// What a newcomer trips on at the command line (issue 37 item 8), as an
// operator runs it (the real command line in a child process, on a catalogue
// of its own): the Data API named where the products are, always on; the
// default server saying why it cannot be drained or removed; an operation
// repeated saying it changed nothing; a new project saying what is off.
import pg from 'pg'
import t from 'tap'
import { runCli } from '../helpers/cli.ts'
import { serverUrl } from '../helpers/db.ts'
import { catalogueDatabase, dropCatalogue } from '../helpers/platform.ts'

const catalogueUrl = await catalogueDatabase(t)
t.teardown(() => dropCatalogue(catalogueUrl))

const baseplane = (args: string[]) => runCli(args, { DATABASE_URL: catalogueUrl, PORT: '8123' })
const created = await baseplane(['projects', 'create', '--name', 'Newcomer', '--json'])
if (created.code !== 0) throw new Error(`projects create: ${created.stderr}`)
const { ref } = JSON.parse(created.stdout) as { ref: string }

t.test('the Data API is named among the products, always on, and not switched', async (t) => {
  const listed = await baseplane(['projects', 'list'])
  t.equal(listed.code, 0, listed.stderr)
  t.match(listed.stdout, new RegExp(`\\n${ref}\\s+Newcomer\\s+free\\s+active\\s+graphql,rest,storage\\s+http`), 'PRODUCTS lists rest beside graphql')
  t.match(JSON.parse((await baseplane(['projects', 'list', '--json'])).stdout), [{ ref, products: { auth: false, graphql: true, push: false, rest: true } }])
  const shown = await baseplane(['projects', 'show', ref])
  t.match(shown.stdout, /^products {6}graphql, rest, storage$/m)

  const enabled = await baseplane(['products', 'enable', 'rest', ref])
  t.same(enabled, { code: 0, stdout: `The Data API (REST) is always on for ${ref}: nothing to enable\n`, stderr: '' })
  const graphql = await baseplane(['products', 'enable', 'graphql', ref])
  t.same(graphql, { code: 0, stdout: `GraphQL is always on for ${ref}: nothing to enable\n`, stderr: '' })
  const disabled = await baseplane(['products', 'disable', 'rest', ref])
  t.same(disabled, { code: 1, stdout: '', stderr: 'baseplane: The Data API (REST) is always on for every project: it cannot be turned off (only auth and push are switched)\n' })
  const unknown = await baseplane(['products', 'enable', 'sms', ref])
  t.same(unknown, { code: 1, stdout: '', stderr: 'baseplane: Unknown product "sms": use one of auth, push (graphql, rest and storage are always on)\n' })
  const help = await baseplane(['products', 'enable', '--help'])
  t.match(help.stdout, 'GraphQL (graphql), the Data API (rest) and Storage (storage) are always on for every project: they are not switched.')
  t.match(JSON.parse((await baseplane(['projects', 'show', ref, '--json'])).stdout), { products: { auth: false, push: false, rest: true } }, 'nothing was switched')
})

t.test('the default server says why it cannot be drained or removed', async (t) => {
  const server = "it is the catalogue's own server (DATABASE_URL, or the embedded one), set by the platform's configuration rather than added"
  const drained = await baseplane(['servers', 'drain', 'default'])
  t.same(drained, {
    code: 1,
    stdout: '',
    stderr: `baseplane: The default server cannot be drained: ${server}, and it is where new projects go when no added server takes them. To send new projects elsewhere, give an added server more room than it (baseplane servers set ID --connections N): new projects go to the server with the most room\n`,
  })
  const removal = `baseplane: The default server cannot be removed: ${server}, and the platform's catalogue lives on it, so the platform cannot run without it\n`
  t.same(await baseplane(['servers', 'remove', 'default']), { code: 1, stdout: '', stderr: removal }, 'said at once, not after asking for --yes')
  t.same(await baseplane(['servers', 'remove', 'default', '--yes']), { code: 1, stdout: '', stderr: removal })
  const budget = await baseplane(['servers', 'set', 'default', '--connections', '5'])
  t.same(budget, { code: 1, stdout: '', stderr: "baseplane: The default server (the catalogue's own) is set by the platform's configuration: its budget is BASEPLANE_MAX_PROJECT_CONNECTIONS\n" })
  t.match(JSON.parse((await baseplane(['servers', 'list', '--json'])).stdout), [{ id: 'default', draining: false }], 'nothing changed')
})

t.test('an operation repeated says it changed nothing (exit 0)', async (t) => {
  const twice = async (args: string[], first: string, again: string) => {
    t.same(await baseplane(args), { code: 0, stdout: `${first}\n`, stderr: '' }, args.join(' '))
    t.same(await baseplane(args), { code: 0, stdout: `${again}\n`, stderr: '' }, `${args.join(' ')}, again`)
  }
  await twice(['products', 'enable', 'auth', ref], `Enabled auth for ${ref}`, `auth is already enabled for ${ref}: nothing changed`)
  t.match(JSON.parse((await baseplane(['products', 'enable', 'auth', ref, '--json'])).stdout), { ref, product: 'auth', enabled: true, changed: false })
  await twice(['products', 'disable', 'auth', ref], `Disabled auth for ${ref}`, `auth is already disabled for ${ref}: nothing changed`)
  await twice(['products', 'enable', 'push', ref], `Enabled push for ${ref}`, `push is already enabled for ${ref}: nothing changed`)
  await twice(['projects', 'plan', ref, 'plus'], `Project ${ref} is now on plan plus`, `Project ${ref} is already on plan plus: nothing changed`)
  t.match(JSON.parse((await baseplane(['projects', 'plan', ref, 'plus', '--json'])).stdout), { ref, plan: 'plus', changed: false })
  t.same(await baseplane(['projects', 'plan', ref, 'gold']), { code: 1, stdout: '', stderr: 'baseplane: Unknown plan "gold": use one of free, plus, pro, business\n' })

  // An added server (the test's own, under another id: set and drain only read and write its row).
  const catalogue = new pg.Client({ connectionString: catalogueUrl })
  await catalogue.connect()
  t.teardown(() => catalogue.end())
  await catalogue.query(`insert into baseplane.db_servers (id, admin_url, connection_budget, system_identifier) values ('spare', $1, 30, 'the test server, again')`, [await serverUrl()])
  await twice(['servers', 'drain', 'spare'], 'Database server spare takes no new project; its 0 stay', 'Database server spare already takes no new project (its 0 stay): nothing changed')
  await twice(['servers', 'drain', 'spare', '--undo'], 'Database server spare takes new projects again', 'Database server spare already takes new projects: nothing changed')
  t.same(await baseplane(['servers', 'drain', 'default', '--undo']), { code: 0, stdout: 'Database server default already takes new projects (the default server never drains): nothing changed\n', stderr: '' })
  await twice(['servers', 'set', 'spare', '--connections', '20'], 'Database server spare: connection budget 20', 'Database server spare already has connection budget 20: nothing changed')
  await catalogue.query(`delete from baseplane.db_servers where id = 'spare'`)
})

t.test('projects create says Auth and Push are off, and how to turn them on', async (t) => {
  const made = await baseplane(['projects', 'create', '--name', 'Second'])
  t.equal(made.code, 0, made.stderr)
  const second = /^Created project ([a-z]{20}) \(Second, plan free\)\n/.exec(made.stdout)?.[1]
  t.ok(second, made.stdout)
  t.match(
    made.stdout,
    `\non                the Data API (REST) and GraphQL\noff               Auth and Push: turn them on with baseplane products enable auth ${second} and baseplane products enable push ${second}\n`,
  )
  t.ok(made.stdout.endsWith(`baseplane products enable push ${second}\n`), 'the last line')
  const json = JSON.parse((await baseplane(['projects', 'create', '--name', 'Third', '--json'])).stdout)
  t.match(json, { products: { auth: false, push: false, graphql: true, rest: true }, anon_key: String }, '--json is the project as before')
})
