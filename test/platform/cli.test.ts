import t from 'tap'
import { decodeJwt } from 'jose'
import pg from 'pg'
import { runCli } from '../helpers/cli.ts'
import { catalogueDatabase, dropCatalogue } from '../helpers/platform.ts'

const catalogueUrl = await catalogueDatabase(t)
t.teardown(() => dropCatalogue(catalogueUrl))

const baseplane = (args: string[], input?: string) => runCli(args, { DATABASE_URL: catalogueUrl, PORT: '8123' }, input)

t.test('--version and --help', async (t) => {
  const version = await baseplane(['--version'])
  t.same(version, { code: 0, stdout: '0.6.0\n', stderr: '' })
  const help = await baseplane(['--help'])
  t.equal(help.code, 0)
  t.match(help.stdout, /baseplane projects create --name NAME/)
})

t.test('projects, keys, products and db url end to end', async (t) => {
  const created = await baseplane(['projects', 'create', '--name', 'Cli Shop', '--plan', 'plus', '--json'])
  t.equal(created.code, 0, created.stderr)
  const project = JSON.parse(created.stdout)
  t.match(project, { name: 'Cli Shop', plan: 'plus', products: { auth: false, graphql: true, push: false }, base_url: `http://127.0.0.1:8123/project/${project.ref}` })
  t.equal(decodeJwt(project.anon_key).role, 'anon')

  const human = await baseplane(['projects', 'list'])
  t.equal(human.code, 0)
  t.match(human.stdout, new RegExp(`^REF\\s+NAME\\s+PLAN\\s+STATE\\s+PRODUCTS\\s+BASE URL\\n${project.ref}\\s+Cli Shop\\s+plus\\s+active\\s+graphql,rest,storage\\s+http`))
  const listed = JSON.parse((await baseplane(['projects', 'list', '--json'])).stdout)
  t.same(listed.map((p: { ref: string }) => p.ref), [project.ref])

  const keys = JSON.parse((await baseplane(['keys', project.ref, '--json'])).stdout)
  t.same(keys, { ref: project.ref, base_url: project.base_url, anon_key: project.anon_key, service_role_key: project.service_role_key })
  const unconfirmed = await baseplane(['keys', project.ref, '--rotate'])
  t.same(
    { code: unconfirmed.code, stderr: unconfirmed.stderr },
    { code: 2, stderr: `baseplane: rotating the keys of ${project.ref} stops its anon and service_role keys, and every token signed with its JWT secret, at once: add --yes to confirm\n` },
  )
  t.same(JSON.parse((await baseplane(['keys', project.ref, '--json'])).stdout), keys, 'nothing rotated without --yes')
  const rotated = await baseplane(['keys', project.ref, '--rotate', '--yes'])
  t.equal(rotated.code, 0, rotated.stderr)
  t.match(rotated.stdout, `New keys for ${project.ref}: the old anon and service_role keys, and every token signed with the old JWT secret, stopped working.\n`)
  const after = JSON.parse((await baseplane(['keys', project.ref, '--json'])).stdout)
  t.not(after.anon_key, keys.anon_key)
  t.match(rotated.stdout, after.anon_key, 'the new keys are shown')

  const enabled = await baseplane(['products', 'enable', 'auth', project.ref])
  t.same({ code: enabled.code, out: enabled.stdout }, { code: 0, out: `Enabled auth for ${project.ref}\n` })
  const shown = JSON.parse((await baseplane(['projects', 'list', '--json'])).stdout)[0]
  t.equal(shown.products.auth, true)

  const dbUrl = await baseplane(['db', 'url', project.ref])
  t.equal(dbUrl.code, 0)
  const owner = new pg.Client({ connectionString: dbUrl.stdout.trim() })
  await owner.connect()
  t.same((await owner.query('select current_user as u')).rows, [{ u: `bp_${project.ref}_owner` }])
  await owner.end()

  const deleted = await baseplane(['projects', 'delete', project.ref, '--yes'])
  t.same({ code: deleted.code, out: deleted.stdout }, { code: 0, out: `Deleted project ${project.ref}\n` })
  t.same(JSON.parse((await baseplane(['projects', 'list', '--json'])).stdout), [])
})

t.test('wrong command lines: one line naming the problem, non-zero exit', async (t) => {
  const cases: Array<[string[], number, string]> = [
    [['projects', 'create'], 2, 'baseplane: missing --name\n'],
    [['projects', 'create', '--name'], 2, 'baseplane: --name needs a value (usage: baseplane projects create --name NAME [--plan free|plus|pro|business])\n'],
    [['projects', 'create', '--name', 'x', '--colour', 'red'], 2, 'baseplane: unknown option --colour for "projects create" (usage: baseplane projects create --name NAME [--plan free|plus|pro|business])\n'],
    [['projects', 'create', '--name', 'x', '--plan', 'gold'], 1, 'baseplane: Unknown plan "gold": use one of free, plus, pro, business\n'],
    [['keys'], 2, 'baseplane: missing REF (usage: baseplane keys REF [--rotate --yes | --signing-keys | --rotate-signing-key [--alg ES256|RS256] [--now]])\n'],
    [['keys', 'nosuchproject'], 1, 'baseplane: Project "nosuchproject" not found\n'],
    [['keys', 'a', 'b'], 2, 'baseplane: unexpected argument "b" (usage: baseplane keys REF [--rotate --yes | --signing-keys | --rotate-signing-key [--alg ES256|RS256] [--now]])\n'],
    [['projects', 'delete', 'nosuchproject'], 2, 'baseplane: deleting nosuchproject drops its database: add --yes to confirm\n'],
    [['projects', 'delete', 'nosuchproject', '--yes'], 1, 'baseplane: Project "nosuchproject" not found\n'],
    [['products', 'enable', 'sms', 'nosuchproject'], 1, 'baseplane: Unknown product "sms": use one of auth, push (graphql, rest and storage are always on)\n'],
    [['products', 'disable', 'graphql', 'nosuchproject'], 1, 'baseplane: GraphQL is always on for every project: it cannot be turned off (only auth and push are switched)\n'],
    [['frobnicate'], 2, 'baseplane: unknown command "frobnicate" (see baseplane --help)\n'],
    [['db', 'url'], 2, 'baseplane: missing REF (usage: baseplane db url REF)\n'],
  ]
  for (const [args, code, stderr] of cases) {
    const run = await baseplane(args)
    t.same({ code: run.code, stderr: run.stderr, stdout: run.stdout }, { code, stderr, stdout: '' }, args.join(' '))
  }
})
