// A project's own API roles (issue 13 item 8, over HTTP): the operator adds
// a role with the CLI or the admin API, the owner grants it tables and
// writes policies for it, and a token naming it (signed with the project's
// secret, or issued by Auth to a user given the role) is served with exactly
// those grants. Roles are the server's, so every name here carries this
// run's suffix and the teardown drops what is left.
import crypto from 'node:crypto'
import { decodeJwt } from 'jose'
import pg, { escapeIdentifier } from 'pg'
import t from 'tap'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { signJwt } from '../../lib/jwt.ts'
import { MAX_PROJECT_ROLES, PROJECT_ROLE_MARK } from '../../control-plane/project-roles.ts'
import { runCli } from '../helpers/cli.ts'
import { adminQuery, serverUrl, withDatabase } from '../helpers/db.ts'
import { request, type ErrorBody } from '../helpers/http.ts'
import { startTestPlatform, type TestProject } from '../helpers/platform.ts'
import { deleteProject } from '../../control-plane/projects.ts'

const platform = await startTestPlatform(t)
const a = await platform.createProject({ name: 'Roles A', auth: true })
const b = await platform.createProject({ name: 'Roles B' })
const server = await serverUrl()

const suffix = crypto.randomBytes(4).toString('hex')
const made = new Set<string>()
/** A role name of this run, dropped at the end whatever the test left. */
function roleName(prefix: string): string {
  const name = `${prefix}_${suffix}`
  made.add(name)
  return name
}
t.teardown(async () => {
  for (const name of made) {
    for (const project of [a, b]) {
      await adminQuery(withDatabase(server, project.record.dbName), `drop owned by ${escapeIdentifier(name)}`).catch(() => {})
    }
    await adminQuery(server, `drop role if exists ${escapeIdentifier(name)}`)
  }
})

const editor = roleName('editor')
const USER_1 = '00000000-0000-4000-8000-000000000001'
const USER_2 = '00000000-0000-4000-8000-000000000002'

const baseplane = (args: string[]) => runCli(args, { DATABASE_URL: platform.catalogueUrl })
const adminApi = `${platform.origin}/platform/v1`
const adminHeaders = { authorization: `Bearer ${platform.config.adminToken}` }
const now = () => Math.floor(Date.now() / 1000)

function tokenOf(project: TestProject, role: string, sub = USER_1): string {
  return signJwt(project.record.jwtSecret, { sub, role, aud: 'authenticated', exp: now() + 600 })
}

async function gql(project: TestProject, token: string, query: string): Promise<{ status: number; body: unknown }> {
  const reply = await request(`${project.baseUrl}/graphql/v1`, { headers: { apikey: project.anonKey, authorization: `Bearer ${token}` }, body: { query } })
  return { status: reply.status, body: reply.json }
}

function refused(accepted: string): { status: number; body: ErrorBody } {
  return { status: 401, body: { code: 'bad_jwt', message: `Invalid JWT: role claim must be ${accepted}` } }
}

async function asOwner(project: TestProject, sql: string): Promise<void> {
  const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
  await owner.connect()
  try {
    await owner.query(sql)
  } finally {
    await owner.end()
  }
}

async function serverRole(name: string): Promise<{ mark: string | null; canLogin: boolean } | undefined> {
  const { rows } = await adminQuery<{ mark: string | null; canLogin: boolean }>(
    server,
    `select shobj_description(oid, 'pg_authid') as mark, rolcanlogin as "canLogin" from pg_roles where rolname = $1`,
    [name],
  )
  return rows[0]
}

async function isMember(project: TestProject, role: string): Promise<boolean> {
  const { rows } = await adminQuery<{ member: boolean }>(server, `select pg_has_role($1, $2, 'member') as member`, [project.record.dbApiRole, role])
  return rows[0]!.member
}

const notes = '{ noteCollection { edges { node { id body } } } }'

t.test('the CLI adds a role; the owner grants it a table and a policy; its token sees exactly that', async (t) => {
  const added = await baseplane(['projects', 'roles', a.ref, 'add', editor])
  t.same(added, {
    code: 0,
    stdout:
      `Added role ${editor} to ${a.ref}: accepted from the next request\n` +
      `API roles of ${a.ref} (a token's role claim may name any of them)\n` +
      `built in  anon, authenticated, service_role\n` +
      `added     ${editor}\n`,
    stderr: '',
  })
  t.same(JSON.parse((await baseplane(['projects', 'roles', a.ref, '--json'])).stdout), { ref: a.ref, roles: [editor] })
  t.same(await serverRole(editor), { mark: PROJECT_ROLE_MARK, canLogin: false }, 'a NOLOGIN role, marked as made by Baseplane')
  t.equal(await isMember(a, editor), true, "the project's login role may switch to it")

  const role = escapeIdentifier(editor)
  await asOwner(a, `
    comment on schema public is e'@graphql({"introspection": true})';
    create table note (id int primary key, author uuid not null, body text not null);
    create table secret (id int primary key, code text not null);
    insert into note values (1, '${USER_1}', 'mine'), (2, '${USER_2}', 'theirs');
    insert into secret values (1, 'hidden');
    alter table note enable row level security;
    grant select on note to ${role};
    create policy own_notes on note for select to ${role} using (author = auth.uid());
    create function whoami() returns text language sql stable as $$
      select current_user || ' ' || auth.role() || ' ' || current_setting('statement_timeout') $$;
  `)

  t.same(await gql(a, tokenOf(a, editor), notes), { status: 200, body: { data: { noteCollection: { edges: [{ node: { id: 1, body: 'mine' } }] } } } }, 'rows: its policy with auth.uid()')
  t.same(await gql(a, tokenOf(a, editor, USER_2), notes), { status: 200, body: { data: { noteCollection: { edges: [{ node: { id: 2, body: 'theirs' } }] } } } }, 'another user, their row')
  t.same(await gql(a, tokenOf(a, editor), '{ whoami }'), { status: 200, body: { data: { whoami: `${editor} ${editor} 8s` } } }, "runs as the role, with authenticated's timeout")
  t.same(await gql(a, tokenOf(a, editor), '{ note: __type(name: "note") { name } secret: __type(name: "secret") { name } }'), {
    status: 200,
    body: { data: { note: { name: 'note' }, secret: null } },
  }, 'schema: the granted table, not the other')
  t.same(await gql(a, tokenOf(a, editor), '{ secretCollection { edges { node { id } } } }'), {
    status: 200,
    body: { data: null, errors: [{ message: 'Cannot query field "secretCollection" on type "Query". Did you mean "noteCollection"?' }] },
  })
  t.same(await gql(a, tokenOf(a, 'authenticated'), notes), { status: 200, body: { data: { noteCollection: { edges: [] } } } }, "authenticated is not given the role's policy")
})

t.test('tokens naming other roles are refused, with the roles that are accepted', async (t) => {
  const accepted = `anon, authenticated, service_role or ${editor}`
  for (const role of ['baseplane_auth_admin', 'postgres', roleName('viewer'), b.record.dbOwnerRole, a.record.dbApiRole]) {
    t.same(await gql(a, tokenOf(a, role), notes), refused(accepted), role)
  }
  t.same(await gql(b, tokenOf(b, editor), notes), refused('anon, authenticated or service_role'), 'another project that has not added it')
})

t.test('the admin API refuses bad names and changes nothing', async (t) => {
  const stranger = roleName('stranger')
  await adminQuery(server, `create role ${escapeIdentifier(stranger)} nologin noinherit`)
  const invalid = (name: string) => `Invalid role name "${name}": a lowercase letter, then lowercase letters, digits or underscores (at most 63 characters)`
  const cases: Array<[unknown, number, string, string]> = [
    [{}, 400, 'invalid_argument', '"name" is required'],
    [{ name: 7 }, 400, 'invalid_argument', '"name" must be a string'],
    [{ name: 'Editor' }, 400, 'invalid_argument', invalid('Editor')],
    [{ name: '1st' }, 400, 'invalid_argument', invalid('1st')],
    [{ name: 'my-role' }, 400, 'invalid_argument', invalid('my-role')],
    [{ name: '' }, 400, 'invalid_argument', invalid('')],
    [{ name: 'x'.repeat(64) }, 400, 'invalid_argument', invalid('x'.repeat(64))],
    [{ name: 'authenticated' }, 400, 'invalid_argument', '"authenticated" is a built-in API role of every project: it needs no adding'],
    [{ name: 'postgres' }, 400, 'invalid_argument', '"postgres" is reserved: choose another role name'],
    [{ name: 'pg_read_all_data' }, 400, 'invalid_argument', 'Role names starting with "pg_" are reserved: choose another name'],
    [{ name: 'baseplane_auth_admin' }, 400, 'invalid_argument', 'Role names starting with "baseplane" are reserved: choose another name'],
    [{ name: b.record.dbOwnerRole }, 400, 'invalid_argument', 'Role names starting with "bp_" are reserved: choose another name'],
    [{ name: stranger }, 400, 'invalid_argument', `A role "${stranger}" already exists on the project's database server and Baseplane did not make it: choose another name`],
  ]
  for (const [body, status, code, message] of cases) {
    const reply = await request(`${adminApi}/projects/${a.ref}/roles`, { headers: adminHeaders, body: body as object })
    t.same({ status: reply.status, body: reply.json }, { status, body: { code, message } }, JSON.stringify(body))
  }
  const elsewhere = [
    ['POST', '/projects/nosuchproject/roles', { name: 'viewer' }, 404, 'project_not_found', 'Project "nosuchproject" not found'],
    ['DELETE', `/projects/${a.ref}/roles/nosuchrole`, undefined, 404, 'role_not_found', `Project "${a.ref}" has no role "nosuchrole"`],
    ['DELETE', `/projects/${a.ref}/roles/${stranger}`, undefined, 404, 'role_not_found', `Project "${a.ref}" has no role "${stranger}"`],
    ['PUT', `/projects/${a.ref}/roles`, undefined, 405, 'method_not_allowed', `PUT is not allowed on /platform/v1/projects/${a.ref}/roles`],
  ] as const
  for (const [method, path, body, status, code, message] of elsewhere) {
    const reply = await request(`${adminApi}${path}`, { method, headers: adminHeaders, body })
    t.same({ status: reply.status, body: reply.json }, { status, body: { code, message } }, `${method} ${path}`)
  }
  const listed = await request(`${adminApi}/projects/${a.ref}/roles`, { headers: adminHeaders })
  t.same({ status: listed.status, body: listed.json }, { status: 200, body: { ref: a.ref, roles: [editor] } })
  t.same(await serverRole(stranger), { mark: null, canLogin: false }, 'the stranger is left as it was')
  t.equal(await isMember(a, stranger), false, 'and not granted')
})

t.test('the CLI refuses wrong command lines', async (t) => {
  const usage = 'usage: baseplane projects roles REF [add NAME | remove NAME]'
  t.same(await baseplane(['projects', 'roles', a.ref, 'add']), { code: 2, stdout: '', stderr: `baseplane: add needs a role NAME (${usage})\n` })
  t.same(await baseplane(['projects', 'roles', a.ref, 'grant', 'x']), {
    code: 2,
    stdout: '',
    stderr: `baseplane: unexpected argument "grant": use add NAME or remove NAME (${usage})\n`,
  })
  t.same(await baseplane(['projects', 'roles', a.ref, 'add', 'Bad']), {
    code: 1,
    stdout: '',
    stderr: 'baseplane: Invalid role name "Bad": a lowercase letter, then lowercase letters, digits or underscores (at most 63 characters)\n',
  })
  t.same(await baseplane(['projects', 'roles', a.ref, 'remove', 'viewer']), { code: 1, stdout: '', stderr: `baseplane: Project "${a.ref}" has no role "viewer"\n` })
})

t.test('Auth gives a user one of the project roles, and its access token carries it', async (t) => {
  const admin = { apikey: a.serviceRoleKey, authorization: `Bearer ${a.serviceRoleKey}` }
  const email = `editor-${suffix}@example.com`
  const created = await request<Record<string, unknown>>(`${a.baseUrl}/auth/v1/admin/users`, {
    headers: admin,
    body: { id: USER_1, email, password: 'correct horse', email_confirm: true, role: editor },
  })
  t.same({ status: created.status, id: created.json.id, role: created.json.role }, { status: 200, id: USER_1, role: editor })

  const signedIn = await request<{ access_token: string }>(`${a.baseUrl}/auth/v1/token?grant_type=password`, {
    headers: { apikey: a.anonKey },
    body: { email, password: 'correct horse' },
  })
  t.equal(signedIn.status, 200)
  t.equal(decodeJwt(signedIn.json.access_token).role, editor)
  t.same(await gql(a, signedIn.json.access_token, notes), { status: 200, body: { data: { noteCollection: { edges: [{ node: { id: 1, body: 'mine' } }] } } } })

  const notAllowed = (role: string) => ({
    code: 400,
    error_code: 'validation_failed',
    msg: `role must be one of authenticated, ${editor} (add roles with baseplane projects roles), got "${role}"`,
  })
  const serviceRole = await request(`${a.baseUrl}/auth/v1/admin/users`, { headers: admin, body: { email: `other-${suffix}@example.com`, role: 'service_role' } })
  t.same({ status: serviceRole.status, body: serviceRole.json }, { status: 400, body: notAllowed('service_role') })
  const postgres = await request(`${a.baseUrl}/auth/v1/admin/users/${USER_1}`, { method: 'PUT', headers: admin, body: { role: 'postgres' } })
  t.same({ status: postgres.status, body: postgres.json }, { status: 400, body: notAllowed('postgres') })
  const back = await request<Record<string, unknown>>(`${a.baseUrl}/auth/v1/admin/users/${USER_1}`, { method: 'PUT', headers: admin, body: { role: 'authenticated' } })
  t.same({ status: back.status, role: back.json.role }, { status: 200, role: 'authenticated' })
  const again = await request<Record<string, unknown>>(`${a.baseUrl}/auth/v1/admin/users/${USER_1}`, { method: 'PUT', headers: admin, body: { role: editor } })
  t.same({ status: again.status, role: again.json.role }, { status: 200, role: editor })
})

t.test('a second project adds the same name on its own, and removing it there leaves the first', async (t) => {
  const first = await request(`${adminApi}/projects/${b.ref}/roles`, { headers: adminHeaders, body: { name: editor } })
  t.same({ status: first.status, body: first.json }, { status: 201, body: { ref: b.ref, roles: [editor] } })
  const twice = await request(`${adminApi}/projects/${b.ref}/roles`, { headers: adminHeaders, body: { name: editor } })
  t.same({ status: twice.status, body: twice.json }, { status: 200, body: { ref: b.ref, roles: [editor] } }, 'adding again is no error')

  await asOwner(b, `
    create table board (id int primary key, title text not null);
    insert into board values (1, 'b only');
    grant select on board to ${escapeIdentifier(editor)};
  `)
  const boards = '{ boardCollection { edges { node { title } } } }'
  t.same(await gql(b, tokenOf(b, editor), boards), { status: 200, body: { data: { boardCollection: { edges: [{ node: { title: 'b only' } }] } } } }, "B's grants in B")
  t.same(await gql(b, tokenOf(b, editor), notes), {
    status: 200,
    body: { data: null, errors: [{ message: 'Cannot query field "noteCollection" on type "Query". Did you mean "boardCollection"?' }] },
  }, "nothing of A's")
  t.same(await gql(a, tokenOf(a, editor), boards), {
    status: 200,
    body: { data: null, errors: [{ message: 'Cannot query field "boardCollection" on type "Query". Did you mean "noteCollection"?' }] },
  }, "nor of B's in A")

  const removed = await request(`${adminApi}/projects/${b.ref}/roles/${editor}`, { method: 'DELETE', headers: adminHeaders })
  t.same({ status: removed.status, body: removed.json }, { status: 200, body: { ref: b.ref, roles: [] } })
  t.same(await gql(b, tokenOf(b, editor), boards), refused('anon, authenticated or service_role'), 'refused in B from the next request')
  t.equal(await isMember(b, editor), false, "B's login role may no longer switch to it")
  t.same(await gql(a, tokenOf(a, editor), notes), { status: 200, body: { data: { noteCollection: { edges: [{ node: { id: 1, body: 'mine' } }] } } } }, 'A still served')
  t.same(await serverRole(editor), { mark: PROJECT_ROLE_MARK, canLogin: false }, 'the shared role stays while A uses it')
})

t.test('a role made by Baseplane and changed on the server since is refused', async (t) => {
  const tampered = roleName('tampered')
  t.equal((await request(`${adminApi}/projects/${b.ref}/roles`, { headers: adminHeaders, body: { name: tampered } })).status, 201)
  await adminQuery(server, `alter role ${escapeIdentifier(tampered)} login`)
  const reply = await request(`${adminApi}/projects/${a.ref}/roles`, { headers: adminHeaders, body: { name: tampered } })
  t.same({ status: reply.status, body: reply.json }, {
    status: 400,
    body: {
      code: 'invalid_argument',
      message: `The role "${tampered}" on the project's database server was changed after Baseplane made it (it may log in, has attributes or is a member of another role): restore it or drop it there first`,
    },
  })
  t.equal(await isMember(a, tampered), false)
  await adminQuery(server, `alter role ${escapeIdentifier(tampered)} nologin`)
  t.equal((await request(`${adminApi}/projects/${b.ref}/roles/${tampered}`, { method: 'DELETE', headers: adminHeaders })).status, 200)
  t.equal(await serverRole(tampered), undefined, 'dropped once no project uses it and nothing refers to it')
})

t.test(`at most ${MAX_PROJECT_ROLES} roles a project, also when added at once`, async (t) => {
  // One more than the limit, all at once: the count is checked under the server's lock, so exactly one is refused.
  const names = Array.from({ length: MAX_PROJECT_ROLES + 1 }, (_, i) => roleName(`bulk${String(i).padStart(2, '0')}`))
  const replies = await Promise.all(names.map((name) => request(`${adminApi}/projects/${b.ref}/roles`, { headers: adminHeaders, body: { name } })))
  const refusedOnes = replies.filter((reply) => reply.status !== 201)
  t.same(refusedOnes.map((reply) => ({ status: reply.status, body: reply.json })), [{
    status: 400,
    body: { code: 'invalid_argument', message: `Project "${b.ref}" has ${MAX_PROJECT_ROLES} roles, the most a project may have: remove one first` },
  }])
  const listed = await request<{ roles: string[] }>(`${adminApi}/projects/${b.ref}/roles`, { headers: adminHeaders })
  const kept = listed.json.roles
  t.equal(kept.length, MAX_PROJECT_ROLES)
  const left = names.filter((name) => !kept.includes(name))
  t.equal(await serverRole(left[0]!), undefined, 'nothing made on the server for the one refused')
  const again = await request(`${adminApi}/projects/${b.ref}/roles`, { headers: adminHeaders, body: { name: kept[0] } })
  t.equal(again.status, 200, 'one it has may still be added again')
  const removals = await Promise.all(kept.map((name) => request(`${adminApi}/projects/${b.ref}/roles/${name}`, { method: 'DELETE', headers: adminHeaders })))
  t.same(removals.map((reply) => reply.status), kept.map(() => 200))
  const { rows } = await adminQuery(server, `select rolname from pg_roles where rolname like $1`, [`bulk%_${suffix}`])
  t.same(rows, [], 'every one dropped from the server')
})

t.test('removing the role makes its token refused again; the owner keeps its grants', async (t) => {
  const removed = await baseplane(['projects', 'roles', a.ref, 'remove', editor])
  t.same(removed, {
    code: 0,
    stdout:
      `Removed role ${editor} from ${a.ref}: refused from the next request\n` +
      `API roles of ${a.ref} (a token's role claim may name any of them)\n` +
      `built in  anon, authenticated, service_role\n` +
      `added     (none)\n`,
    stderr: '',
  })
  t.same(await gql(a, tokenOf(a, editor), notes), refused('anon, authenticated or service_role'))
  t.equal(await isMember(a, editor), false)
  const { rows } = await adminQuery<{ usage: boolean }>(withDatabase(server, a.record.dbName), `select has_schema_privilege($1, 'auth', 'usage') as usage`, [editor])
  t.same(rows, [{ usage: false }], "the platform's grants are taken back")
  t.same(await serverRole(editor), { mark: PROJECT_ROLE_MARK, canLogin: false }, "the owner's grant and policy still name it, so it stays")

  const readded = await request(`${adminApi}/projects/${a.ref}/roles`, { headers: adminHeaders, body: { name: editor } })
  t.same({ status: readded.status, body: readded.json }, { status: 201, body: { ref: a.ref, roles: [editor] } })
  t.same(await gql(a, tokenOf(a, editor), notes), { status: 200, body: { data: { noteCollection: { edges: [{ node: { id: 1, body: 'mine' } }] } } } }, 'added again, the owner\'s grants apply again')
})

t.test("deleting a project drops its roles that nothing else uses", async (t) => {
  const c = await platform.createProject({ name: 'Roles C' })
  const only = roleName('only')
  t.equal((await request(`${adminApi}/projects/${c.ref}/roles`, { headers: adminHeaders, body: { name: only } })).status, 201)
  await asOwner(c, `create table t (id int primary key); grant select on t to ${escapeIdentifier(only)};`)
  await deleteProject(platform.platform.controlPlane, c.ref)
  t.equal(await serverRole(only), undefined)
})
