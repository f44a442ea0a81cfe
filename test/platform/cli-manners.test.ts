// The command line's manners: help per command, "did you mean", where it
// works, flags (not API fields) in its messages, negative numbers as values,
// one exit-status rule (2: the command line is wrong; 1: refused or failed),
// and the Google settings' fixes (Auth off said; client ID and secret cleared).
import t from 'tap'
import { ControlPlane } from '../../control-plane/control-plane.ts'
import { createProject, getProject } from '../../control-plane/projects.ts'
import { VERSION } from '../../control-plane/version.ts'
import { runCli, runCliEach } from '../helpers/cli.ts'
import { adminQuery } from '../helpers/db.ts'
import { catalogueDatabase, dropCatalogue } from '../helpers/platform.ts'

const catalogueUrl = await catalogueDatabase(t)
const controlPlane = await ControlPlane.open(catalogueUrl)
t.teardown(async () => {
  await controlPlane.close()
  await dropCatalogue(catalogueUrl)
})
const masked = (() => {
  const url = new URL(catalogueUrl)
  if (url.password) url.password = '***'
  return url.toString()
})()

const env = { DATABASE_URL: catalogueUrl, PORT: '8124', BASEPLANE_HOME: '/nonexistent/home' }
const baseplane = (args: string[], input?: string) => runCli(args, env, input)
const each = (runs: string[][]) => runCliEach(runs.map((args) => ({ args })), env)

t.test('--help: the list, one command, one family; where the CLI works', async (t) => {
  const [list, one, again, keys, family, unknown, subfamily, credentials] = await each([
    ['--help'],
    ['projects', 'create', '--help'],
    ['projects', 'create', '--name', 'x', '--help'],
    ['keys', 'someref', '--help'],
    ['projects', '--help'],
    ['frobnicate', '--help'],
    ['auth', 'users', '--help'],
    ['push', 'credentials', '--help'],
  ])
  t.equal(list.code, 0)
  t.equal(list.stderr, '')
  t.match(list.stdout, `Baseplane ${VERSION}\n\nUsage:\n  baseplane start [--no-demo]`)
  t.match(list.stdout, /\n {2}baseplane projects create --name NAME \[--plan free\|plus\|pro\|business\]\n {4,}Create a project with its own database and keys\n/)
  t.match(list.stdout, '\n  --home DIR  the platform home to use (default: BASEPLANE_HOME, or ./.baseplane)\n  --url URL ')
  t.match(list.stdout, 'Exit status: 0 done; 1 the operation was refused or failed; 2 the command line is wrong')
  t.match(list.stdout, `\nPlatform home: /nonexistent/home; database: DATABASE_URL ${masked}.\n`)
  t.notMatch(list.stdout, new URL(catalogueUrl).password || 'no password', 'the password is never printed')

  t.same(one, {
    code: 0,
    stderr: '',
    stdout: [
      'Usage: baseplane projects create --name NAME [--plan free|plus|pro|business]',
      '',
      'Create a project with its own database and keys',
      '',
      'Options:',
      "  --name NAME                    the project's name (1 to 200 characters); the ref is 20 random letters, not made from it",
      '  --plan free|plus|pro|business  free (default), plus, pro or business: its fair shares and limits',
      '',
      'Every command takes:',
      '  --json      print the result as JSON',
      '  --home DIR  the platform home to use (default: BASEPLANE_HOME, or ./.baseplane)',
      '  --url URL   the server to name in URLs (default: the one serving the home now, else BASEPLANE_PUBLIC_URL)',
      '  --help      print this help',
      '',
      'Exit status: 0 done; 1 the operation was refused or failed; 2 the command line is wrong (unknown command or option, missing or unexpected argument).',
      `Platform home: /nonexistent/home; database: DATABASE_URL ${masked}.`,
      '',
    ].join('\n'),
  })
  t.same(again, one, '--help wins over the rest of the line')
  t.match(keys.stdout, /^Usage: baseplane keys REF /)
  t.equal(family.code, 0)
  t.match(family.stdout, /^Usage:\n {2}baseplane projects create --name NAME/)
  t.notMatch(family.stdout, 'baseplane keys', 'only the family')
  // The first words of several commands are a family too.
  t.same({ code: subfamily.code, stderr: subfamily.stderr }, { code: 0, stderr: '' })
  t.match(subfamily.stdout, /^Usage:\n {2}baseplane auth users list /)
  t.notMatch(subfamily.stdout, 'baseplane auth settings', 'only the commands under auth users')
  t.same({ code: credentials.code, stderr: credentials.stderr }, { code: 0, stderr: '' })
  t.match(credentials.stdout, /baseplane push credentials set REF apns[^\n]*\n[^]*baseplane push credentials show REF[^]*baseplane push credentials remove REF/)

  t.same(unknown, { code: 2, stdout: '', stderr: 'baseplane: unknown command "frobnicate" (see baseplane --help)\n' })
})

t.test('a mistyped command: the nearest one is suggested, exit status 2', async (t) => {
  const cases: Array<[string[], string]> = [
    [['projects', 'craete', '--name', 'x'], 'unknown command "projects craete"; did you mean "projects create"? (see baseplane --help)'],
    [['projets', 'list'], 'unknown command "projets list"; did you mean "projects list"? (see baseplane --help)'],
    [['key', 'abc'], 'unknown command "key"; did you mean "keys"? (see baseplane --help)'],
    [['auth', 'setings', 'abc'], 'unknown command "auth setings"; did you mean "auth settings"? (see baseplane --help)'],
    [['projects'], '"projects" needs a command: use one of create, list, delete, plan, show, suspend, resume, timeouts, quotas, rest, roles (see baseplane projects --help)'],
    [['projects', 'zap'], 'unknown command "projects zap": use one of create, list, delete, plan, show, suspend, resume, timeouts, quotas, rest, roles (see baseplane projects --help)'],
    [['frobnicate'], 'unknown command "frobnicate" (see baseplane --help)'],
  ]
  const runs = await each([...cases.map(([args]) => args), []])
  cases.forEach(([args, message], i) => t.same(runs[i], { code: 2, stdout: '', stderr: `baseplane: ${message}\n` }, args.join(' ')))
  const bare = runs[cases.length]!
  t.equal(bare.code, 2, 'no command at all is a usage error')
  t.match(bare.stdout, /^Baseplane .*\n\nUsage:/)
})

t.test('values: negative numbers reach the command, refusals name flags and exit 1', async (t) => {
  const project = await createProject(controlPlane, { name: 'Manners' })
  const ref = project.ref
  const refused = (message: string) => ({ code: 1, stdout: '', stderr: `baseplane: ${message}\n` })
  const usage = (message: string) => ({ code: 2, stdout: '', stderr: `baseplane: ${message}\n` })
  const cases: Array<[string[], { code: number; stdout: string; stderr: string | RegExp }]> = [
    [['auth', 'settings', ref, '--mail-per-hour', '-5'], refused('--mail-per-hour must be a whole number from 0 to 1000000, got -5')],
    [['auth', 'settings', ref, '--mail-per-hour=-5'], refused('--mail-per-hour must be a whole number from 0 to 1000000, got -5')],
    [['auth', 'settings', ref, '--mail-per-hour', 'lots'], refused('--mail-per-hour must be a whole number from 0 to 1000000, got "lots"')],
    [['auth', 'settings', ref, '--otp-expiry', '59'], refused('--otp-expiry must be a whole number from 60 to 86400, got 59')],
    [['mail', 'list', ref, '--limit', '0'], refused('--limit must be a whole number from 1 to 1000, got 0')],
    [['mail', 'list', ref, '--limit', '-1'], refused('--limit must be a whole number from 1 to 1000, got -1')],
    [['auth', 'template', ref, 'welcome', '--subject', 's', '--file', 'x.html'], refused(`unknown template kind "welcome": use one of ${(await import('../../control-plane/auth-settings.ts')).KINDS.join(', ')}`)],
    [['auth', 'template', ref, 'recovery', '--subject', 's', '--file', '/nonexistent/x.html'], refused('cannot read --file /nonexistent/x.html: there is no such file')],
    [['auth', 'google', ref, '--stdin'], refused('--stdin read an empty client secret')],
    // The command line itself is wrong: 2.
    [['auth', 'settings', ref, '--mail-per-hour'], { code: 2, stdout: '', stderr: /^baseplane: --mail-per-hour needs a value \(usage: baseplane auth settings REF .*\)\n$/ }],
    [['projects', 'create', '--name', '-x'], usage('--name needs a value (usage: baseplane projects create --name NAME [--plan free|plus|pro|business])')],
    [['projects', 'delete', ref, '--yes=1'], usage('--yes takes no value (usage: baseplane projects delete REF --yes)')],
    [['auth', 'google', ref, '--enable', '--disable'], usage('--enable and --disable cannot be used together')],
    [['auth', 'google', ref, '--clear', '--client-id', 'x'], usage('--clear cannot be used with --client-id or --stdin')],
    [['projects', 'list', '--home'], usage('--home needs a value (a folder)')],
  ]
  const runs = await each(cases.map(([args]) => args))
  for (const [i, [args, expected]] of cases.entries()) {
    const run = runs[i]!
    if (expected.stderr instanceof RegExp) t.match(run, expected, args.join(' '))
    else t.same(run, expected, args.join(' '))
  }

  // A value stored by an older version fails the whole check: the message names the flag that fixes it.
  await adminQuery(catalogueUrl, `update baseplane.projects set auth_settings = '{"otp_expiry_seconds": 5}' where ref = $1`, [ref])
  t.same(await baseplane(['auth', 'settings', ref, '--mail-per-hour', '10']), refused('--otp-expiry must be a whole number from 60 to 86400'))
  t.same(await baseplane(['auth', 'settings', ref, '--otp-expiry', '600', '--mail-per-hour', '10', '--json']).then((r) => ({ code: r.code, stderr: r.stderr, set: JSON.parse(r.stdout || '{}').mail_per_hour })), {
    code: 0,
    stderr: `baseplane: note: Auth is off for ${ref}; its settings are kept and apply once it is on: baseplane products enable auth ${ref}\n`,
    set: 10,
  })
})

t.test('auth google: says when Auth is off; --clear removes the client ID and secret', async (t) => {
  const { ref } = await createProject(controlPlane, { name: 'Google Manners' })
  const callback = `http://127.0.0.1:8124/project/${ref}/auth/v1/callback`
  // Every line, in order (other lines may come between); while Auth is off, standard error says so.
  const authOff = `baseplane: note: Auth is off for ${ref}; its settings are kept and apply once it is on: baseplane products enable auth ${ref}\n`
  const shows = (run: { code: number; stdout: string; stderr: string }, lines: string[], stderr = '') =>
    t.same({ code: run.code, stderr: run.stderr, lines: run.stdout.split('\n').filter((line) => lines.includes(line)) }, { code: 0, stderr, lines })
  const configured = await baseplane(['auth', 'google', ref, '--client-id', 'id-1.apps.googleusercontent.com', '--stdin', '--enable'], 'the-secret\n')
  shows(configured, [
    'client ID       id-1.apps.googleusercontent.com',
    'client secret   (set)',
    'switch          on',
    `callback URL    ${callback}`,
    `Google sign-in is configured, but Auth is off for ${ref}, so it is not offered: turn Auth on with baseplane products enable auth ${ref}`,
  ], authOff)
  t.match(JSON.parse((await baseplane(['auth', 'google', ref, '--json'])).stdout), { offered: false, auth_enabled: false, missing: [] })
  t.match((await baseplane(['auth', 'settings', ref])).stdout, `google                configured, but Auth is off for ${ref}: turn it on with baseplane products enable auth ${ref}`)

  t.equal((await baseplane(['products', 'enable', 'auth', ref])).code, 0)
  const on = await baseplane(['auth', 'google', ref])
  t.match(on.stdout, /\nGoogle sign-in is offered\.\n$/)
  t.match((await baseplane(['auth', 'settings', ref])).stdout, /google {16}offered\n/)

  const cleared = await baseplane(['auth', 'google', ref, '--clear'])
  shows(cleared, [
    'client ID       (not set)',
    'client secret   (not set)',
    'switch          on',
    `callback URL    ${callback}`,
    'Google sign-in is not offered: missing client ID, client secret.',
  ])
  const stored = (await getProject(controlPlane, ref)).authSettings.google as Record<string, unknown>
  t.same({ id: 'client_id' in stored, secret: 'client_secret' in stored, enabled: stored.enabled }, { id: false, secret: false, enabled: true }, 'both are gone from the catalogue; the switch is kept')
})

t.test('an empty list says which platform it looked in', async (t) => {
  const empty = await catalogueDatabase(t)
  t.teardown(() => dropCatalogue(empty))
  const url = new URL(empty)
  if (url.password) url.password = '***'
  const listed = await runCli(['projects', 'list'], { DATABASE_URL: empty })
  t.same(listed, { code: 0, stderr: '', stdout: `No projects in DATABASE_URL ${url.toString()}. Create one with: baseplane projects create --name NAME\n` })
})

t.test('--json: a refusal is JSON on standard error too, with the same exit status', async (t) => {
  const [refused, wrong, plain] = await each([
    ['projects', 'delete', 'nosuchproject', '--yes', '--json'],
    ['keys', '--json'],
    ['projects', 'delete', 'nosuchproject', '--yes'],
  ])
  t.same({ code: refused.code, stdout: refused.stdout, stderr: JSON.parse(refused.stderr) }, { code: 1, stdout: '', stderr: { code: 'project_not_found', message: 'Project "nosuchproject" not found' } })
  t.equal(wrong.code, 2)
  t.match(JSON.parse(wrong.stderr), { code: 'usage', message: /^missing REF \(usage: baseplane keys REF / })
  t.same({ code: plain.code, stderr: plain.stderr }, { code: 1, stderr: 'baseplane: Project "nosuchproject" not found\n' }, 'without --json, a sentence')
})
