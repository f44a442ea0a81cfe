// Members through the admin API (issue 42 items 1 and 2): the operator
// invites by email (the mail through a real SMTP catcher), the invitation's
// link sets the password, personal access tokens are made, used, expired and
// revoked, each role is held to its routes (403 operator_only, not_a_member,
// insufficient_role), a member sees nothing of a project not theirs, owners
// manage their project's members, and every change carries its actor.
import t from 'tap'
import { memberCaller, createToken } from '../../control-plane/members.ts'
import { linkOf, startMailCatcher } from '../auth/helpers.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const mail = await startMailCatcher(t)
const platform = await startTestPlatform(t, { SMTP_URL: mail.url })
const controlPlane = platform.platform.controlPlane
const admin = `${platform.origin}/platform/v1`
const operator = { authorization: `Bearer ${platform.config.adminToken}` }
const a = await platform.createProject({ name: 'Alpha', auth: true, push: true })
const b = await platform.createProject({ name: 'Beta' })

/** Invites `email` to A with `role` as the operator, accepts through the dashboard's form, and answers a token of theirs. */
async function member(email: string, role: string, projects = [{ ref: a.ref, role }]): Promise<{ token: string; headers: Record<string, string> }> {
  const since = mail.messages.length
  const invited = await request<{ email: string; joined: boolean }>(`${admin}/members`, { headers: operator, body: { email, projects } })
  if (invited.status !== 201) throw new Error(`invite ${email}: ${invited.status} ${invited.text}`)
  const link = new URL(linkOf(await mail.next(email, since)))
  const token = link.searchParams.get('token')!
  const accepted = await request(`${platform.origin}/dashboard/accept`, {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, password: 'correct horse 42' }).toString(),
  })
  if (accepted.status !== 303) throw new Error(`accept ${email}: ${accepted.status} ${accepted.text.slice(0, 300)}`)
  const id = (await controlPlane.catalogue.query<{ id: string }>('select id from baseplane.members where email = $1', [email])).rows[0]!.id
  const made = await createToken(controlPlane, (await memberCaller(controlPlane, id))!, { name: 'tests' })
  return { token: made.token, headers: { authorization: `Bearer ${made.token}` } }
}

const owner = await member('owner@example.com', 'owner')
const developer = await member('dev@example.com', 'developer')
const reader = await member('reader@example.com', 'read-only')
const other = await member('other@example.com', 'owner', [{ ref: b.ref, role: 'owner' }])

t.test('the invitation mail links to the dashboard and is used once', async (t) => {
  const since = mail.messages.length
  const invited = await request<{ email: string; joined: boolean; projects: unknown[] }>(`${admin}/members`, { headers: operator, body: { email: 'Once@Example.com', projects: [{ ref: a.ref, role: 'read-only' }] } })
  t.equal(invited.status, 201)
  t.same(invited.json.projects, [{ ref: a.ref, role: 'read-only' }])
  t.equal(invited.json.email, 'once@example.com', 'emails are kept in lower case')
  t.equal(invited.json.joined, false)
  const message = await mail.next('once@example.com', since)
  t.match(message.subject, /invited/)
  const link = new URL(linkOf(message))
  t.equal(link.origin + link.pathname, `${platform.origin}/dashboard/accept`)
  const form = (password: string) => ({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: link.searchParams.get('token')!, password }).toString() })
  const short = await request(`${platform.origin}/dashboard/accept`, form('short'))
  t.equal(short.status, 400, 'a short password is refused')
  t.match(short.text, /at least 8 characters/)
  t.equal((await request(`${platform.origin}/dashboard/accept`, form('long enough pass'))).status, 303)
  const again = await request(`${platform.origin}/dashboard/accept`, form('another long one'))
  t.equal(again.status, 400, 'a used link is refused')
  t.match(again.text, /unknown, used or expired/)
})

t.test('bad invitations are refused and write nothing', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{ email: 'nope', projects: [{ ref: a.ref, role: 'owner' }] }, 'email must be an email address'],
    [{ email: 'x@example.com', projects: [] }, 'projects must list at least one {ref, role}'],
    [{ email: 'x@example.com', projects: [{ ref: a.ref, role: 'admin' }] }, 'projects[0].role must be one of owner, developer, read-only'],
  ]
  for (const [body, message] of cases) {
    const reply = await request(`${admin}/members`, { headers: operator, body: body as object })
    t.same({ status: reply.status, body: reply.json }, { status: 400, body: { code: 'invalid_argument', message } })
  }
  const unknown = await request<{ code: string }>(`${admin}/members`, { headers: operator, body: { email: 'x@example.com', projects: [{ ref: 'nosuchproject', role: 'owner' }] } })
  t.equal(unknown.status, 404)
  const { rowCount } = await controlPlane.catalogue.query("select 1 from baseplane.members where email = 'x@example.com'")
  t.equal(rowCount, 0, 'no member was made')
})

t.test('a member sees only their projects and nothing of the others', async (t) => {
  const listed = await request<Array<{ ref: string }>>(`${admin}/projects`, { headers: reader.headers })
  t.equal(listed.status, 200)
  t.same(listed.json.map((p) => p.ref), [a.ref])
  const theirs = await request<Array<{ ref: string }>>(`${admin}/projects`, { headers: other.headers })
  t.same(theirs.json.map((p) => p.ref), [b.ref])
  const all = await request<Array<{ ref: string }>>(`${admin}/projects`, { headers: operator })
  t.same(all.json.map((p) => p.ref).sort(), [a.ref, b.ref].sort(), 'the operator sees every project')
  for (const path of [`/projects/${b.ref}`, `/projects/${b.ref}/keys`, `/projects/${b.ref}/auth`, `/projects/${b.ref}/members`, `/projects/${b.ref}/storage/buckets`, `/projects/nosuchproject`]) {
    const reply = await request<{ code: string }>(`${admin}${path}`, { headers: owner.headers })
    t.equal(reply.status, 403, path)
    t.equal(reply.json.code, 'not_a_member', path)
  }
  const del = await request<{ code: string }>(`${admin}/projects/${b.ref}`, { method: 'DELETE', headers: owner.headers })
  t.same([del.status, del.json.code], [403, 'not_a_member'])
})

t.test('the operator keeps plans, quotas, suspension, servers, the fleet, events and project creation', async (t) => {
  const cases: Array<[string, string, object?]> = [
    ['POST', '/projects', { name: 'Mine' }],
    ['PATCH', `/projects/${a.ref}`, { plan: 'pro' }],
    ['PATCH', `/projects/${a.ref}/quotas`, {}],
    ['POST', `/projects/${a.ref}/suspend`, { reason: 'x' }],
    ['POST', `/projects/${a.ref}/resume`],
    ['GET', '/servers'],
    ['GET', '/events'],
    ['GET', '/usage'],
    ['GET', '/members'],
    ['POST', '/members', { email: 'z@example.com', projects: [{ ref: a.ref, role: 'owner' }] }],
  ]
  for (const [method, path, body] of cases) {
    const reply = await request<{ code: string; message: string }>(`${admin}${path}`, { method, headers: owner.headers, body })
    t.same([reply.status, reply.json?.code], [403, 'operator_only'], `${method} ${path}`)
  }
  const { rows } = await controlPlane.catalogue.query<{ state: string; plan: string }>('select state, plan from baseplane.projects where ref = $1', [a.ref])
  t.same(rows[0], { state: 'active', plan: 'free' }, 'nothing changed')
})

t.test('each role on each family of project routes', async (t) => {
  // [method, path, body, least role] — the role's rank decides: read-only < developer < owner.
  const cases: Array<[string, string, object | undefined, 'read-only' | 'developer' | 'owner']> = [
    ['GET', `/projects/${a.ref}`, undefined, 'read-only'],
    ['GET', `/projects/${a.ref}/auth`, undefined, 'read-only'],
    ['PATCH', `/projects/${a.ref}/auth`, { mail_min_interval_seconds: 0 }, 'developer'],
    ['GET', `/projects/${a.ref}/mail`, undefined, 'developer'],
    ['GET', `/projects/${a.ref}/keys`, undefined, 'developer'],
    ['GET', `/projects/${a.ref}/db-url`, undefined, 'developer'],
    ['GET', `/projects/${a.ref}/timeouts`, undefined, 'read-only'],
    ['GET', `/projects/${a.ref}/roles`, undefined, 'read-only'],
    ['GET', `/projects/${a.ref}/rest`, undefined, 'read-only'],
    ['PATCH', `/projects/${a.ref}/rest`, { max_rows: 500 }, 'developer'],
    ['GET', `/projects/${a.ref}/signing-keys`, undefined, 'read-only'],
    ['GET', `/projects/${a.ref}/storage/buckets`, undefined, 'read-only'],
    ['POST', `/projects/${a.ref}/storage/buckets`, { name: 'pics' }, 'developer'],
    ['GET', `/projects/${a.ref}/push/credentials`, undefined, 'read-only'],
    ['GET', `/projects/${a.ref}/usage`, undefined, 'read-only'],
    ['GET', `/projects/${a.ref}/quotas`, undefined, 'read-only'],
    ['GET', `/projects/${a.ref}/members`, undefined, 'read-only'],
    ['POST', `/projects/${a.ref}/keys/rotate`, undefined, 'owner'],
    ['POST', `/projects/${a.ref}/signing-keys/rotate`, {}, 'owner'],
  ]
  const rank = { 'read-only': 0, developer: 1, owner: 2 }
  const who = [['read-only', reader], ['developer', developer], ['owner', owner]] as const
  for (const [method, path, body, least] of cases) {
    for (const [role, holder] of who) {
      // A bucket of each holder's own name, so each creation is new.
      const sent = body && 'name' in body ? { name: `${body.name}${rank[role]}` } : body
      const reply = await request<{ code: string }>(`${admin}${path}`, { method, headers: holder.headers, body: sent })
      if (rank[role] >= rank[least]) t.ok(reply.status < 300, `${role}: ${method} ${path} answers ${reply.status} ${reply.status >= 300 ? reply.text : ''}`)
      else t.same([reply.status, reply.json?.code], [403, 'insufficient_role'], `${role}: ${method} ${path} refused`)
    }
  }
})

t.test('owners manage their project members, never beyond it', async (t) => {
  const since = mail.messages.length
  const added = await request<{ email: string; role: string }>(`${admin}/projects/${a.ref}/members`, { headers: owner.headers, body: { email: 'new@example.com', role: 'developer' } })
  t.equal(added.status, 201, added.text)
  t.match(added.json, { email: 'new@example.com', role: 'developer', joined: false })
  await mail.next('new@example.com', since)
  const byDeveloper = await request<{ code: string }>(`${admin}/projects/${a.ref}/members`, { headers: developer.headers, body: { email: 'x2@example.com', role: 'owner' } })
  t.same([byDeveloper.status, byDeveloper.json.code], [403, 'insufficient_role'])
  const onB = await request<{ code: string }>(`${admin}/projects/${b.ref}/members`, { headers: owner.headers, body: { email: 'new@example.com', role: 'owner' } })
  t.same([onB.status, onB.json.code], [403, 'not_a_member'], "an owner of A cannot grant anything on B")
  const changed = await request<{ role: string }>(`${admin}/projects/${a.ref}/members/new@example.com`, { method: 'PATCH', headers: owner.headers, body: { role: 'read-only' } })
  t.same([changed.status, changed.json.role], [200, 'read-only'])
  const badRole = await request<{ code: string }>(`${admin}/projects/${a.ref}/members/new@example.com`, { method: 'PATCH', headers: owner.headers, body: { role: 'god' } })
  t.same([badRole.status, badRole.json.code], [400, 'invalid_argument'])
  const listed = await request<Array<{ email: string; role: string }>>(`${admin}/projects/${a.ref}/members`, { headers: reader.headers })
  t.ok(listed.json.some((m) => m.email === 'new@example.com' && m.role === 'read-only'))
  t.notOk(listed.json.some((m) => m.email === 'other@example.com'), "B's members are not A's")
  const removed = await request(`${admin}/projects/${a.ref}/members/new@example.com`, { method: 'DELETE', headers: owner.headers })
  t.equal(removed.status, 204)
  const gone = await request<{ code: string }>(`${admin}/projects/${a.ref}/members/new@example.com`, { method: 'DELETE', headers: owner.headers })
  t.same([gone.status, gone.json.code], [404, 'member_not_found'])

  const events = await request<{ events: Array<{ kind: string; actor: string; data: Record<string, unknown> }> }>(`${admin}/events?project=${a.ref}&limit=1000`, { headers: operator })
  const mine = events.json.events.filter((e) => e.actor === 'member:owner@example.com').map((e) => e.kind)
  for (const kind of ['member.invited', 'member.role_changed', 'member.removed', 'project.changed']) t.ok(mine.includes(kind), `${kind} by the owner`)
  const invitedByOperator = events.json.events.find((e) => e.kind === 'member.invited' && e.data.email === 'reader@example.com')
  t.equal(invitedByOperator?.actor, 'operator')
  const settings = events.json.events.find((e) => e.kind === 'project.changed' && e.actor === 'member:dev@example.com' && e.data.path === `/platform/v1/projects/${a.ref}/auth`)
  t.match(settings?.data, { method: 'PATCH', path: `/platform/v1/projects/${a.ref}/auth` }, "a developer's settings change is recorded with who made it")
})

t.test('personal access tokens: made, listed, revoked, expired', async (t) => {
  const made = await request<{ token: string; id: string; name: string; state: string }>(`${admin}/account/tokens`, { headers: developer.headers, body: { name: 'ci', expires_in_days: 7 } })
  t.equal(made.status, 201)
  t.match(made.json, { name: 'ci', state: 'active', token: /^bp_pat_/ })
  const listed = await request<Array<{ id: string; name: string; token?: string }>>(`${admin}/account/tokens`, { headers: developer.headers })
  t.ok(listed.json.some((x) => x.id === made.json.id), 'listed')
  t.notOk(listed.json.some((x) => 'token' in x), 'never shown again')
  const stored = await controlPlane.catalogue.query<{ token_hash: string }>('select token_hash from baseplane.member_tokens where id = $1', [made.json.id])
  t.not(stored.rows[0]!.token_hash, made.json.token, 'stored hashed')
  t.match(stored.rows[0]!.token_hash, /^[0-9a-f]{64}$/)
  const ci = { authorization: `Bearer ${made.json.token}` }
  t.equal((await request(`${admin}/projects/${a.ref}`, { headers: ci })).status, 200, 'the new token works')
  const others = await request<{ code: string }>(`${admin}/account/tokens/${made.json.id}`, { method: 'DELETE', headers: reader.headers })
  t.same([others.status, others.json.code], [404, 'token_not_found'], "another member cannot revoke it")
  const revoked = await request<{ state: string }>(`${admin}/account/tokens/${made.json.id}`, { method: 'DELETE', headers: developer.headers })
  t.same([revoked.status, revoked.json.state], [200, 'revoked'])
  const after = await request<{ code: string; message: string }>(`${admin}/projects/${a.ref}`, { headers: ci })
  t.same({ status: after.status, body: after.json }, { status: 401, body: { code: 'invalid_token', message: 'This personal access token was revoked' } })
  const short = await request<{ token: string; id: string }>(`${admin}/account/tokens`, { headers: developer.headers, body: { name: 'short' } })
  await controlPlane.catalogue.query("update baseplane.member_tokens set expires_at = now() - interval '1 second' where id = $1", [short.json.id])
  const expired = await request<{ code: string; message: string }>(`${admin}/projects/${a.ref}`, { headers: { authorization: `Bearer ${short.json.token}` } })
  t.same({ status: expired.status, body: expired.json }, { status: 401, body: { code: 'invalid_token', message: 'This personal access token has expired' } })
  const unknown = await request<{ code: string }>(`${admin}/projects`, { headers: { authorization: 'Bearer bp_pat_nothing' } })
  t.same([unknown.status, unknown.json.code], [401, 'invalid_token'])
  for (const body of [{ name: '' }, { name: 'x', expires_in_days: 0 }, { name: 'x', expires_in_days: 9999 }]) {
    const bad = await request<{ code: string }>(`${admin}/account/tokens`, { headers: developer.headers, body })
    t.same([bad.status, bad.json.code], [400, 'invalid_argument'], JSON.stringify(body))
  }
  const byOperator = await request<{ code: string }>(`${admin}/account/tokens`, { headers: operator })
  t.same([byOperator.status, byOperator.json.code], [403, 'member_only'])
  const account = await request<{ email: string; projects: unknown[] }>(`${admin}/account`, { headers: developer.headers })
  t.same([account.json.email, account.json.projects], ['dev@example.com', [{ ref: a.ref, role: 'developer' }]])
})

t.test('a changed role applies to the next request; a removed member is refused', async (t) => {
  const patch = await request(`${admin}/projects/${a.ref}/members/reader@example.com`, { method: 'PATCH', headers: operator, body: { role: 'owner' } })
  t.equal(patch.status, 200)
  t.equal((await request(`${admin}/projects/${a.ref}/keys`, { headers: reader.headers })).status, 200)
  t.equal((await request(`${admin}/projects/${a.ref}/members/reader@example.com`, { method: 'DELETE', headers: operator })).status, 204)
  const refused = await request<{ code: string }>(`${admin}/projects/${a.ref}`, { headers: reader.headers })
  t.same([refused.status, refused.json.code], [403, 'not_a_member'])
  const none = await request<unknown[]>(`${admin}/projects`, { headers: reader.headers })
  t.same(none.json, [])
})

t.test('password reset through the mail; sign-in throttled after failures', async (t) => {
  const form = (fields: Record<string, string>) => ({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() })
  const since = mail.messages.length
  t.equal((await request(`${platform.origin}/dashboard/reset`, form({ email: 'dev@example.com' }))).status, 200)
  t.equal((await request(`${platform.origin}/dashboard/reset`, form({ email: 'nobody@example.com' }))).status, 200, 'an unknown email is answered the same')
  const message = await mail.next('dev@example.com', since)
  t.match(message.subject, /Reset/)
  t.notOk(mail.messages.slice(since).some((m) => m.to.includes('nobody@example.com')), 'nothing is sent to a stranger')
  const token = new URL(linkOf(message)).searchParams.get('token')!
  t.equal((await request(`${platform.origin}/dashboard/reset/confirm`, form({ token, password: 'a new password 7' }))).status, 303)
  const signIn = (password: string) => request(`${platform.origin}/dashboard/login`, form({ email: 'dev@example.com', password }))
  const ok = await signIn('a new password 7')
  t.equal(ok.status, 303, 'the new password signs in')
  t.match(String(ok.headers['set-cookie']), /bp_dashboard=/)
  t.equal((await signIn('correct horse 42')).status, 401, 'the old one does not')
  for (let i = 0; i < 5; i++) await signIn('wrong password')
  const blocked = await signIn('a new password 7')
  t.equal(blocked.status, 429, 'blocked after five failures, even with the right password')
  t.match(blocked.text, /Too many failed sign-ins/)
})
