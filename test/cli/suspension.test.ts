// `baseplane projects suspend|resume|show`, the state in `projects list`, and
// `baseplane events`, as an operator runs them (the real command line in a
// child process, on a running platform's catalogue): what they print, what
// the project's callers then see, and every refusal (exit status, one line,
// nothing written).
import t from 'tap'
import { runCli } from '../helpers/cli.ts'
import { adminQuery } from '../helpers/db.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const platform = await startTestPlatform(t)
const project = await platform.createProject({ name: 'Cli Suspended' })
const port = new URL(platform.origin).port
const baseplane = (args: string[]) => runCli(args, { DATABASE_URL: platform.catalogueUrl, PORT: port })
const health = () => request<{ code?: string; status?: string }>(`${project.baseUrl}/health`, { headers: { apikey: project.anonKey } })
const eventCount = async () => (await adminQuery<{ n: number }>(platform.catalogueUrl, 'select count(*)::int as n from baseplane.events')).rows[0]!.n

t.test('suspend, see it, resume', async (t) => {
  const suspended = await baseplane(['projects', 'suspend', project.ref, '--reason', 'Terms of service, ticket 811'])
  t.equal(suspended.code, 0, suspended.stderr)
  t.equal(suspended.stdout, `Suspended project ${project.ref} (Terms of service, ticket 811). Resume it with: baseplane projects resume ${project.ref}\n`)
  const refused = await health()
  t.same([refused.status, refused.json.code], [403, 'project_suspended'], 'the project answers project_suspended')

  const listed = await baseplane(['projects', 'list'])
  t.match(listed.stdout, new RegExp(`^REF\\s+NAME\\s+PLAN\\s+STATE\\s+PRODUCTS\\s+BASE URL\\n${project.ref}\\s+Cli Suspended\\s+free\\s+suspended \\(Terms of service, ticket 811\\)\\s+graphql`))
  const shown = await baseplane(['projects', 'show', project.ref])
  t.equal(shown.code, 0, shown.stderr)
  t.match(shown.stdout, new RegExp(`state\\s+suspended since \\d{4}-`))
  t.match(shown.stdout, /reason\s+Terms of service, ticket 811\n/)
  const json = JSON.parse((await baseplane(['projects', 'show', project.ref, '--json'])).stdout)
  t.match(json, { ref: project.ref, state: 'suspended', state_reason: 'Terms of service, ticket 811', last_request_at: null })

  const resumed = await baseplane(['projects', 'resume', project.ref])
  t.same([resumed.code, resumed.stdout], [0, `Resumed project ${project.ref}: it answers again from the next request\n`], resumed.stderr)
  const answered = await health()
  t.same([answered.status, answered.json.status], [200, 'ok'])
  await platform.platform.lifecycle.activity.flush()
  const after = JSON.parse((await baseplane(['projects', 'show', project.ref, '--json'])).stdout)
  t.match(after, { state: 'active', state_reason: null, last_request_at: String }, 'the request is recorded as its last')
})

t.test('refusals: one line, the right exit status, nothing written', async (t) => {
  const before = await eventCount()
  for (const [args, code, line] of [
    [['projects', 'suspend', project.ref], 2, 'missing --reason'],
    [['projects', 'suspend', project.ref, '--reason', '   '], 1, '--reason is required: say why the project is suspended, in 1 to 500 characters (only operators see it)'],
    [['projects', 'suspend', 'nosuchproject', '--reason', 'x'], 1, 'Project "nosuchproject" not found'],
    [['projects', 'resume', project.ref], 1, `Project ${project.ref} is neither suspended nor paused: there is nothing to resume`],
    [['projects', 'resume', 'nosuchproject'], 1, 'Project "nosuchproject" not found'],
    [['events', '--kind', 'project.exploded'], 1, '--kind must be one of project.created, project.deleted, project.plan_changed, project.suspended, project.paused, project.resumed, quota.crossed, member.invited, member.role_changed, member.removed, member.joined, project.changed; got "project.exploded"'],
    [['events', '--since', 'last week'], 1, '--since must be an ISO 8601 date or time such as 2026-05-01 or 2026-05-01T12:00:00Z, got "last week"'],
    [['events', '--limit', '0'], 1, '--limit must be a whole number from 1 to 1000, got 0'],
  ] as const) {
    const run = await baseplane([...args])
    t.same({ code: run.code, stdout: run.stdout, stderr: run.stderr }, { code, stdout: '', stderr: `baseplane: ${line}\n` }, args.join(' '))
  }
  const twice = await baseplane(['projects', 'suspend', project.ref, '--reason', 'first'])
  t.equal(twice.code, 0)
  const again = await baseplane(['projects', 'suspend', project.ref, '--reason', 'second'])
  t.equal(again.code, 1)
  t.match(again.stderr, new RegExp(`^baseplane: Project ${project.ref} is already suspended \\(since \\d{4}-[^)]+\\); resume it first to suspend it again\\n$`))
  t.match(JSON.parse((await baseplane(['projects', 'show', project.ref, '--json'])).stdout), { state_reason: 'first' }, 'the first reason stays')
  t.equal(await eventCount(), before + 1, 'only the suspension that was made wrote an event')
  t.equal((await baseplane(['projects', 'resume', project.ref])).code, 0)
})

t.test('baseplane events, with filters', async (t) => {
  const all = await baseplane(['events'])
  t.equal(all.code, 0, all.stderr)
  t.match(all.stdout, /^ID\s+AT\s+KIND\s+PROJECT\s+DETAIL\s+WEBHOOK\n/)
  t.match(all.stdout, new RegExp(`project\\.suspended\\s+${project.ref}\\s+Terms of service, ticket 811`))
  const mine = JSON.parse((await baseplane(['events', '--project', project.ref, '--kind', 'project.resumed', '--json'])).stdout)
  t.equal(mine.events.length, 2)
  for (const event of mine.events) t.match(event, { kind: 'project.resumed', ref: project.ref, data: { from: 'suspended', by: 'operator' }, delivery: { state: 'none' } })
  const page = JSON.parse((await baseplane(['events', '--limit', '2', '--json'])).stdout)
  t.equal(page.events.length, 2)
  const next = JSON.parse((await baseplane(['events', '--before', String(page.next_before), '--json'])).stdout)
  t.ok(next.events.every((e: { id: number }) => e.id < page.next_before), 'the next page is older')
  const none = await baseplane(['events', '--since', new Date(Date.now() + 3600_000).toISOString()])
  t.equal(none.stdout, 'No events.\n')
})
