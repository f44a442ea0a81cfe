// A project's pre-request function (PostgREST's db-pre-request) as the
// operator names it, beside the exposed schemas and the max rows (admin API
// `/platform/v1/projects/{ref}/rest`, CLI `baseplane projects rest
// --pre-request`): none by default, `schema.fn` or `fn` saved as written with
// the other settings kept, null (or the CLI's `none`) for none again;
// anything else refused naming the field, with nothing saved, and refused by
// the catalogue's own check too, whoever writes the row. A function that
// cannot be called as the API roles (missing, needing arguments, a trigger's,
// without EXECUTE or its schema's USAGE) is refused when it is named (issue 37
// item 8), and one dropped later is shown as one that cannot be called. The
// function being called is request-settings.test.ts's concern: no request is
// sent here.
import pg from 'pg'
import t from 'tap'
import { runCli } from '../helpers/cli.ts'
import { request } from '../helpers/http.ts'
import { restProject } from './helpers.ts'

const LONGEST_SCHEMA = 's'.repeat(63)
const { project, platform, sql } = await restProject(
  t,
  `
  create function public.check() returns void language plpgsql as $$begin end$$;
  create function public.other() returns void language plpgsql as $$begin end$$;
  create function public."Check$_9"() returns void language plpgsql as $$begin end$$;
  create schema ${LONGEST_SCHEMA};
  grant usage on schema ${LONGEST_SCHEMA} to anon, authenticated, service_role;
  create function ${LONGEST_SCHEMA}.${'f'.repeat(63)}() returns void language plpgsql as $$begin end$$;
  create function public.needs_arg(a integer) returns void language plpgsql as $$begin end$$;
  create function public.trig() returns trigger language plpgsql as $$begin return null; end$$;
  create function public.locked() returns void language plpgsql as $$begin end$$;
  revoke execute on function public.locked() from public, authenticated, service_role;
  create schema hidden;
  create function hidden.fn() returns void language plpgsql as $$begin end$$;
`,
)
const adminHeaders = { authorization: `Bearer ${platform.config.adminToken}` }
type View = { ref: string; schemas: string[]; max_rows: number | null; pre_request: string | null; pre_request_problem: string | null; code?: string; message?: string }
const settings = (method = 'GET', body?: unknown, ref = project.ref) =>
  request<View>(`${platform.origin}/platform/v1/projects/${ref}/rest`, { method, headers: adminHeaders, body: body as object })
const view = (preRequest: string | null, maxRows: number | null = null, problem: string | null = null) => ({
  ref: project.ref,
  schemas: ['public'],
  max_rows: maxRows,
  pre_request: preRequest,
  pre_request_problem: problem,
  tx_end: 'commit',
  plans: false,
})
const MESSAGE = 'must name a function as schema.function or function (letters, digits, _ and $, each starting with a letter or _, at most 63), or be null for none, got '

t.test('none by default', async (t) => {
  const shown = await settings()
  t.equal(shown.status, 200)
  t.same(shown.json, view(null))
})

t.test('named, kept beside the other settings, and cleared with null', async (t) => {
  t.equal((await settings('PATCH', { max_rows: 50 })).status, 200)
  const set = await settings('PATCH', { pre_request: 'public.check' })
  t.equal(set.status, 200)
  t.same(set.json, view('public.check', 50), 'the schemas and max rows kept')
  t.same((await settings()).json, view('public.check', 50), 'saved')

  const maxRows = await settings('PATCH', { max_rows: 60 })
  t.same(maxRows.json, view('public.check', 60), 'another setting changed alone keeps the function')
  const both = await settings('PATCH', { schemas: ['public'], max_rows: null, pre_request: 'Check$_9' })
  t.same(both.json, view('Check$_9'), 'a name without a schema, kept as written (not folded to lower case)')
  const longest = `${'s'.repeat(63)}.${'f'.repeat(63)}`
  t.same((await settings('PATCH', { pre_request: longest })).json, view(longest), '63 bytes a part')

  const cleared = await settings('PATCH', { pre_request: null })
  t.equal(cleared.status, 200)
  t.same(cleared.json, view(null))
  t.same((await settings()).json, view(null))
})

t.test('refusals name the field and save nothing', async (t) => {
  await settings('PATCH', { pre_request: 'public.check' })
  const bad: Array<[unknown, RegExp]> = [
    [{ pre_request: 'public.a.b' }, new RegExp(`^pre_request ${literal(MESSAGE)}"public\\.a\\.b"$`)],
    [{ pre_request: '' }, new RegExp(`^pre_request ${literal(MESSAGE)}""$`)],
    [{ pre_request: 'x;drop' }, /^pre_request must name a function .*got "x;drop"$/],
    [{ pre_request: '"quoted"' }, /^pre_request must name a function .*got "\\"quoted\\""$/],
    [{ pre_request: 42 }, /^pre_request must name a function .*got 42$/],
    [{ pre_request: 'f'.repeat(64) }, /^pre_request must name a function .*at most 63/],
    [{ pre_request: `public.${'f'.repeat(64)}` }, /^pre_request must name a function/],
    [{ pre_request: '1check' }, /^pre_request must name a function/],
    [{ pre_request: 'public. check' }, /^pre_request must name a function/],
    [{ pre_request: 'chéck' }, /^pre_request must name a function/],
    [{ pre_request: ['public.check'] }, /^pre_request must name a function/],
    [{ pre_request: true }, /^pre_request must name a function/],
    [{ schemas: ['public', 'api'], max_rows: 5, pre_request: 'x;drop' }, /^pre_request must name a function/],
    [{ schemas: ['auth'], pre_request: null }, /schemas may not name "auth"/],
    [{ max_rows: 0, pre_request: null }, /max_rows must be a whole number/],
    [{ preRequest: 'public.check' }, /^Unknown setting "preRequest": use schemas, max_rows, pre_request, tx_end or plans$/],
    [{}, /^Give schemas .*, max_rows .*, pre_request \(a function as schema\.function, or null for none\), tx_end \(commit, commit-allow-override, rollback or rollback-allow-override\) or plans \(true or false\)$/],
  ]
  for (const [body, message] of bad) {
    const reply = await settings('PATCH', body)
    t.equal(reply.status, 400, JSON.stringify(body).slice(0, 60))
    t.equal(reply.json.code, 'invalid_argument')
    t.match(reply.json.message, message)
  }
  t.same((await settings()).json, view('public.check'), 'nothing was written')
  t.equal((await settings('PATCH', { pre_request: null }, 'nosuchproject00000000')).status, 404)
})

t.test('a function that cannot be called by the API roles is refused when it is named, and nothing is saved', async (t) => {
  await settings('PATCH', { pre_request: 'public.check' })
  const cannot = (name: string, why: string) => `The pre-request function ${name} cannot be called: ${why}`
  const refused: Array<[string, string]> = [
    ['nosuch.fn', cannot('nosuch.fn', `schema "nosuch" does not exist in the project's database`)],
    ['public.nosuch', cannot('public.nosuch', "the project's database has no function public.nosuch() taking no arguments")],
    ['nosuch', cannot('nosuch', 'no function nosuch() taking no arguments is on the search path of schema public (public)')],
    ['public.needs_arg', cannot('public.needs_arg', "the project's database has no function public.needs_arg() taking no arguments (public.needs_arg(a integer) needs arguments or is not a function)")],
    ['public.trig', cannot('public.trig', 'public.trig() returns trigger: only a trigger can call it')],
    ['public.locked', cannot('public.locked', 'authenticated and service_role may not execute public.locked(): grant execute on function public.locked() to authenticated, service_role')],
    ['hidden.fn', cannot('hidden.fn', 'anon, authenticated and service_role have no usage on schema hidden: grant usage on schema hidden to anon, authenticated, service_role')],
    ['Check', cannot('Check', 'no function Check() taking no arguments is on the search path of schema public (public)')],
  ]
  for (const [name, message] of refused) {
    const reply = await settings('PATCH', { pre_request: name })
    t.same({ status: reply.status, body: reply.json }, { status: 400, body: { code: 'invalid_argument', message } }, name)
  }
  const withOthers = await settings('PATCH', { max_rows: 7, pre_request: 'nosuch.fn' })
  t.equal(withOthers.status, 400, 'the whole change is refused')
  t.same((await settings()).json, view('public.check'), 'nothing was written')
  const found = await settings('PATCH', { pre_request: 'check' })
  t.same(found.json, view('check'), 'a name alone, found on the search path')
  await settings('PATCH', { pre_request: null })
})

t.test('one dropped or revoked after it was named is shown as one that cannot be called', async (t) => {
  await sql('create function public.later() returns void language plpgsql as $$begin end$$')
  t.same((await settings('PATCH', { pre_request: 'public.later' })).json, view('public.later'))
  await sql('drop function public.later()')
  const dropped = "the project's database has no function public.later() taking no arguments"
  t.same((await settings()).json, view('public.later', null, dropped), 'the admin API says why')
  const shown = await runCli(['projects', 'rest', project.ref], { DATABASE_URL: platform.catalogueUrl })
  t.equal(shown.code, 0, shown.stderr)
  t.match(shown.stdout, `pre-request       public.later() (called as the caller before every request)\n                  CANNOT BE CALLED: ${dropped}; every request fails until it can (or --pre-request none)`)
  t.same((await settings('PATCH', { max_rows: 9 })).json, view('public.later', 9, dropped), 'another setting may still change, and the problem is shown')

  await sql('create function public.later() returns void language plpgsql as $$begin end$$; revoke execute on function public.later() from public, anon, authenticated, service_role')
  t.same((await settings()).json.pre_request_problem, 'anon, authenticated and service_role may not execute public.later(): grant execute on function public.later() to anon, authenticated, service_role')
  await sql('grant execute on function public.later() to anon, authenticated, service_role')
  t.same((await settings()).json, view('public.later', 9), 'callable again')
  const fine = await runCli(['projects', 'rest', project.ref], { DATABASE_URL: platform.catalogueUrl })
  t.notMatch(fine.stdout, 'CANNOT BE CALLED')
  await settings('PATCH', { pre_request: null, max_rows: null })
})

t.test("the catalogue's check admits what the control plane does, whoever writes the row", async (t) => {
  const catalogue = new pg.Client({ connectionString: platform.catalogueUrl })
  await catalogue.connect()
  t.teardown(() => catalogue.end())
  const write = (value: string | null) => catalogue.query('update baseplane.projects set rest_pre_request = $2 where ref = $1', [project.ref, value])
  for (const value of ['public.a.b', '', 'x;drop', '"quoted"', 'f'.repeat(64), '1check', 'chéck', 'public.']) {
    await t.rejects(write(value), { code: '23514', constraint: 'projects_rest_pre_request_valid' }, JSON.stringify(value))
  }
  for (const value of ['check', 'api.Check$_9', `${'s'.repeat(63)}.${'f'.repeat(63)}`, null]) {
    await t.resolves(write(value), JSON.stringify(value))
  }
})

t.test('the CLI shows, names and clears it; a refused name writes nothing', async (t) => {
  const cli = (args: string[]) => runCli(['projects', 'rest', project.ref, ...args], { DATABASE_URL: platform.catalogueUrl })
  const shown = await cli([])
  t.equal(shown.code, 0, shown.stderr)
  t.match(shown.stdout, /^pre-request\s+none$/m)

  const named = await cli(['--pre-request', 'public.check'])
  t.equal(named.code, 0, named.stderr)
  t.match(named.stdout, /^pre-request\s+public\.check\(\) \(called as the caller before every request\)$/m)
  t.same(JSON.parse((await cli(['--json'])).stdout), view('public.check'))

  for (const [value, message] of [
    ['public.a.b', new RegExp(`--pre-request ${literal(MESSAGE.replace('be null for none', 'be none for none'))}"public\\.a\\.b"`)],
    ['x;drop', /--pre-request must name a function .*got "x;drop"/],
    ['f'.repeat(64), /--pre-request must name a function/],
  ] as const) {
    const refused = await cli(['--pre-request', value])
    t.equal(refused.code, 1, value)
    t.equal(refused.stdout, '')
    t.match(refused.stderr, message)
  }
  const missing = await cli(['--pre-request', 'nosuch.fn'])
  t.same(missing, { code: 1, stdout: '', stderr: `baseplane: The pre-request function nosuch.fn cannot be called: schema "nosuch" does not exist in the project's database\n` }, 'a function that does not exist')
  const both = await cli(['--max-rows', '0', '--pre-request', 'other'])
  t.equal(both.code, 1, 'one refused value refuses the whole change')
  t.same((await settings()).json, view('public.check'), 'nothing was written by the CLI')

  const cleared = await cli(['--pre-request', 'none'])
  t.equal(cleared.code, 0, cleared.stderr)
  t.match(cleared.stdout, /^pre-request\s+none$/m)
  t.same((await settings()).json, view(null))
})

/** `text` matched literally in a RegExp. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
