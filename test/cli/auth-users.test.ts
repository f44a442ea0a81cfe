// `baseplane auth users list|create|invite|delete REF ...` (Auth's own
// operations on the project's database, as the dashboard's Users tab's), what
// they do as the running platform's Auth API sees it, that they need no
// running server, and their refusals. Each run is a new process: the file
// keeps to a few.
import t from 'tap'
import { runCli } from '../helpers/cli.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const platform = await startTestPlatform(t)
const project = await platform.createProject({ name: 'Cli Users', auth: true })
const off = await platform.createProject({ name: 'Cli No Auth' })
const port = new URL(platform.origin).port
const baseplane = (args: string[], input = '') => runCli(args, { DATABASE_URL: platform.catalogueUrl, PORT: port }, input)

t.test('invite, list, search and delete', async (t) => {
  const invited = await baseplane(['auth', 'users', 'invite', project.ref, 'ada@example.com'])
  t.equal(invited.code, 0, invited.stderr)
  t.match(invited.stdout, /^Invited ada@example\.com \(user [0-9a-f-]{36}\)\n$/)
  const bob = await request(`${project.baseUrl}/auth/v1/admin/users`, {
    headers: { apikey: project.serviceRoleKey, authorization: `Bearer ${project.serviceRoleKey}` },
    body: { email: 'bob@example.com', email_confirm: true },
  })
  t.equal(bob.status, 200)

  const listed = await baseplane(['auth', 'users', 'list', project.ref])
  t.equal(listed.code, 0, listed.stderr)
  t.match(listed.stdout, /^ID\s+EMAIL\s+LAST SIGN-IN\s+CREATED\n/)
  t.match(listed.stdout, /2 users, page 1 of 1\n$/)

  const searched = JSON.parse((await baseplane(['auth', 'users', 'list', project.ref, '--email', 'ada', '--per-page', '1', '--json'])).stdout)
  t.match(searched, { ref: project.ref, total: 1, page: 1, per_page: 1 })
  t.equal(searched.users[0].email, 'ada@example.com')

  const unconfirmed = await baseplane(['auth', 'users', 'delete', project.ref, 'ada@example.com'])
  t.equal(unconfirmed.code, 2, 'without --yes: a usage error')
  t.match(unconfirmed.stderr, 'add --yes')
  const deleted = await baseplane(['auth', 'users', 'delete', project.ref, 'ada@example.com', '--yes', '--json'])
  t.equal(deleted.code, 0, deleted.stderr)
  t.same(JSON.parse(deleted.stdout), { ref: project.ref, deleted: searched.users[0].id })
  const left = await request<{ users: Array<{ email: string }> }>(`${project.baseUrl}/auth/v1/admin/users`, {
    headers: { apikey: project.serviceRoleKey, authorization: `Bearer ${project.serviceRoleKey}` },
  })
  t.same(left.json.users.map((u) => u.email), ['bob@example.com'])
})

t.test('create, with a password from standard input, then sign in with it', async (t) => {
  const created = await baseplane(['auth', 'users', 'create', project.ref, 'Cleo@Example.com', '--password-stdin'], 'correct horse battery\n')
  t.equal(created.code, 0, created.stderr)
  t.match(created.stdout, /^Created cleo@example\.com \(user [0-9a-f-]{36}\)\n$/)
  const signIn = await request<{ access_token?: string; user?: { email: string } }>(`${project.baseUrl}/auth/v1/token?grant_type=password`, {
    headers: { apikey: project.anonKey },
    body: { email: 'cleo@example.com', password: 'correct horse battery' },
  })
  t.equal(signIn.status, 200, signIn.text)
  t.equal(signIn.json.user?.email, 'cleo@example.com')
  t.type(signIn.json.access_token, 'string')

  const unconfirmed = await baseplane(['auth', 'users', 'create', project.ref, 'dan@example.com', '--password-stdin', '--unconfirmed', '--json'], 'another good one')
  t.equal(unconfirmed.code, 0, unconfirmed.stderr)
  t.match(JSON.parse(unconfirmed.stdout), { email: 'dan@example.com', email_confirmed_at: null })
  const refused = await request<{ error_code?: string }>(`${project.baseUrl}/auth/v1/token?grant_type=password`, {
    headers: { apikey: project.anonKey },
    body: { email: 'dan@example.com', password: 'another good one' },
  })
  t.equal(refused.status, 400)
  t.equal(refused.json.error_code, 'email_not_confirmed')

  const noPassword = await baseplane(['auth', 'users', 'create', project.ref, 'eve@example.com', '--json'])
  t.equal(noPassword.code, 0, noPassword.stderr)
  t.match(JSON.parse(noPassword.stdout), { email: 'eve@example.com', email_confirmed_at: String })
})

t.test('create refuses what the admin API refuses, and writes nothing', async (t) => {
  const empty = await baseplane(['auth', 'users', 'create', project.ref, 'fay@example.com', '--password-stdin'], '\n')
  t.equal(empty.code, 1)
  t.match(empty.stderr, '--password-stdin read an empty password')
  const weak = await baseplane(['auth', 'users', 'create', project.ref, 'fay@example.com', '--password-stdin'], 'abc')
  t.equal(weak.code, 1)
  t.match(weak.stderr, /at least 6 characters/i)
  const taken = await baseplane(['auth', 'users', 'create', project.ref, 'cleo@example.com'])
  t.equal(taken.code, 1)
  t.match(taken.stderr, 'already been registered')
  const listed = JSON.parse((await baseplane(['auth', 'users', 'list', project.ref, '--email', 'fay', '--json'])).stdout)
  t.equal(listed.total, 0, 'no user was made for the refused creates')
  const missing = await baseplane(['auth', 'users', 'create', project.ref])
  t.equal(missing.code, 2, 'no email: a usage error')
})

t.test('refusals', async (t) => {
  const nobody = await baseplane(['auth', 'users', 'delete', project.ref, 'nobody@example.com', '--yes'])
  t.equal(nobody.code, 1)
  t.match(nobody.stderr, 'has no user with the email nobody@example.com')
  const authOff = await baseplane(['auth', 'users', 'list', off.ref])
  t.equal(authOff.code, 1)
  t.match(authOff.stderr, `Auth is off for project ${off.ref}`)
})

t.test('with no server running (DATABASE_URL only): create, invite with its mail, list', async (t) => {
  // BASEPLANE_PUBLIC_URL names a port where nothing listens: any call to a server would fail.
  const alone = (args: string[], input = '') => runCli(args, { DATABASE_URL: platform.catalogueUrl, BASEPLANE_PUBLIC_URL: 'http://127.0.0.1:9' }, input)
  const created = await alone(['auth', 'users', 'create', project.ref, 'gus@example.com', '--password-stdin'], 'a fine password\n')
  t.equal(created.code, 0, created.stderr)
  t.match(created.stdout, /^Created gus@example\.com \(user [0-9a-f-]{36}\)\n$/)
  const invited = await alone(['auth', 'users', 'invite', project.ref, 'hal@example.com', '--json'])
  t.equal(invited.code, 0, invited.stderr)
  t.match(JSON.parse(invited.stdout), { email: 'hal@example.com', invited_at: String })
  const listed = JSON.parse((await alone(['auth', 'users', 'list', project.ref, '--email', 'example.com', '--json'])).stdout)
  t.same(listed.users.map((u: { email: string }) => u.email).filter((e: string) => e === 'gus@example.com' || e === 'hal@example.com').sort(), ['gus@example.com', 'hal@example.com'])
  const mail = JSON.parse((await alone(['mail', 'list', project.ref, '--json'])).stdout) as Array<{ kind: string; to: string; delivery: string; html: string | null }>
  const invitation = mail.find((m) => m.to === 'hal@example.com')
  t.match(invitation, { kind: 'invite', delivery: 'outbox' }, "the invite template's mail, in the project's outbox")
  t.match(invitation?.html, `/project/${project.ref}/auth/v1/verify?token=`, 'its link points at the project\'s Auth')
  const signIn = await request<{ user?: { email: string } }>(`${project.baseUrl}/auth/v1/token?grant_type=password`, {
    headers: { apikey: project.anonKey },
    body: { email: 'gus@example.com', password: 'a fine password' },
  })
  t.equal(signIn.status, 200, 'the running platform signs in the user the CLI made alone')
})

t.test('--url names the server in URLs; without it, the one serving the home, else BASEPLANE_PUBLIC_URL', async (t) => {
  // PORT left at its default (8000), where nothing of this test listens: only --url names the server.
  const elsewhere = { DATABASE_URL: platform.catalogueUrl }
  const keys = await runCli(['keys', project.ref, `--url=${platform.origin}/`, '--json'], elsewhere)
  t.equal(keys.code, 0, keys.stderr)
  t.equal(JSON.parse(keys.stdout).base_url, `${platform.origin}/project/${project.ref}`, 'URLs are named on that server')
  const wrong = await runCli(['auth', 'users', 'list', project.ref, '--url', 'localhost:8000'], elsewhere)
  t.equal(wrong.code, 2)
  t.match(wrong.stderr, 'baseplane: --url must be the server\'s http:// or https:// address, got "localhost:8000"')
  const missing = await runCli(['auth', 'users', 'list', project.ref, '--url'], elsewhere)
  t.equal(missing.code, 2)
  t.match(missing.stderr, '--url needs a value')
})
