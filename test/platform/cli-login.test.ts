// The command line for members (issue 42 item 2): `baseplane login` keeps a
// member's token and the platform's address in the user's config (0600);
// commands with a remote form run as their admin API call with it and print
// as they do locally; the others are refused as the operator's; `--token`
// and `--url` work without a login; `logout` forgets it. The operator's own
// `members` commands run on the catalogue and record the operator as actor.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { OPERATOR } from '../../control-plane/access.ts'
import { createToken, inviteMember, memberCaller } from '../../control-plane/members.ts'
import { runCli } from '../helpers/cli.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const platform = await startTestPlatform(t)
const controlPlane = platform.platform.controlPlane
const a = await platform.createProject({ name: 'Alpha' })
const b = await platform.createProject({ name: 'Beta' })
const config = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-cli-login-'))
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-cli-home-'))
t.teardown(() => {
  fs.rmSync(config, { recursive: true, force: true })
  fs.rmSync(home, { recursive: true, force: true })
})
const mailContext = { mail: { smtpUrl: undefined, from: 'Baseplane <no-reply@example.com>' }, addressing: { publicUrl: platform.origin, baseDomain: undefined } }
await inviteMember(controlPlane, OPERATOR, { email: 'dev@example.com', projects: [{ ref: a.ref, role: 'developer' }] }, mailContext)
const id = (await controlPlane.catalogue.query<{ id: string }>("select id from baseplane.members where email = 'dev@example.com'")).rows[0]!.id
const { token } = await createToken(controlPlane, (await memberCaller(controlPlane, id))!, { name: 'cli' })

/** A member's machine: no platform home of its own, a config folder of its own. */
const member = (args: string[], input?: string, env: Record<string, string> = {}) =>
  runCli(args, { XDG_CONFIG_HOME: config, BASEPLANE_HOME: home, DATABASE_URL: '', BASEPLANE_TOKEN: '', BASEPLANE_URL: '', ...env }, input)
const file = path.join(config, 'baseplane', 'config.json')

t.test('login checks the token and saves it for the user alone', async (t) => {
  const bad = await member(['login', '--url', platform.origin], 'bp_pat_wrong\n')
  t.same({ code: bad.code, stderr: bad.stderr }, { code: 1, stderr: 'baseplane: Unknown personal access token\n' })
  t.notOk(fs.existsSync(file), 'nothing saved')
  const noUrl = await member(['login'], `${token}\n`)
  t.equal(noUrl.code, 2)
  t.match(noUrl.stderr, /--url/)
  const good = await member(['login', '--url', platform.origin], `${token}\n`)
  t.equal(good.code, 0, good.stderr)
  t.match(good.stdout, `Signed in to ${platform.origin} as dev@example.com`)
  t.same(JSON.parse(fs.readFileSync(file, 'utf8')), { url: platform.origin, token })
  t.equal(fs.statSync(file).mode & 0o777, 0o600)
})

t.test("the saved login runs members' commands through the admin API", async (t) => {
  const listed = await member(['projects', 'list'])
  t.equal(listed.code, 0, listed.stderr)
  t.match(listed.stdout, new RegExp(`^REF\\s+NAME\\s+PLAN\\s+STATE\\s+PRODUCTS\\s+BASE URL\\n${a.ref}\\s+Alpha`))
  t.notMatch(listed.stdout, b.ref, 'nothing of B')
  const shown = await member(['projects', 'show', a.ref, '--json'])
  t.equal(JSON.parse(shown.stdout).ref, a.ref)
  const other = await member(['projects', 'show', b.ref, '--json'])
  t.equal(other.code, 1)
  t.same(JSON.parse(other.stderr), { code: 'not_a_member', message: `You are not a member of project "${b.ref}"` })
  const keys = await member(['keys', a.ref, '--json'])
  t.same(JSON.parse(keys.stdout).anon_key, a.anonKey, 'a developer reads the keys')
  t.match((await member(['db', 'url', a.ref])).stdout, new RegExp(`^postgres://bp_${a.ref}_owner:`))
  const rotate = await member(['keys', a.ref, '--rotate-signing-key', '--json'])
  t.same([rotate.code, JSON.parse(rotate.stderr).code], [1, 'insufficient_role'], "rotating is the owner's")
  const members = await member(['members', 'list', a.ref])
  t.match(members.stdout, /dev@example\.com\s+developer\s+invited/)
  const invite = await member(['members', 'invite', a.ref, 'x@example.com', 'owner', '--json'])
  t.same([invite.code, JSON.parse(invite.stderr).code], [1, 'insufficient_role'], 'a developer cannot invite')
  for (const [name, words] of [['servers list', ['servers', 'list']], ['projects create', ['projects', 'create', '--name', 'x']], ['events', ['events']], ['start', ['start']]] as const) {
    const refused = await member([...words])
    t.equal(refused.code, 1, name)
    t.match(refused.stderr, `"baseplane ${name}" is the operator's`)
  }
})

t.test('tokens made, used with --token and revoked from the command line', async (t) => {
  const made = await member(['tokens', 'create', 'ci', '--days', '3', '--json'])
  t.equal(made.code, 0, made.stderr)
  const ci = JSON.parse(made.stdout) as { id: string; token: string }
  t.match(ci.token, /^bp_pat_/)
  const bad = await member(['tokens', 'create', 'ci', '--days', '0'])
  t.match(bad.stderr, /--days must be a whole number from 1 to 366/)
  const withToken = await member(['--token', ci.token, '--url', platform.origin, 'projects', 'list', '--json'], undefined, { XDG_CONFIG_HOME: path.join(config, 'none') })
  t.same(JSON.parse(withToken.stdout).map((p: { ref: string }) => p.ref), [a.ref], '--token and --url without a login')
  const byEnv = await member(['projects', 'list', '--json'], undefined, { XDG_CONFIG_HOME: path.join(config, 'none'), BASEPLANE_TOKEN: ci.token, BASEPLANE_URL: platform.origin })
  t.equal(byEnv.code, 0, 'BASEPLANE_TOKEN and BASEPLANE_URL')
  const noUrl = await member(['--token', ci.token, 'projects', 'list'], undefined, { XDG_CONFIG_HOME: path.join(config, 'none') })
  t.same([noUrl.code, /--url URL or BASEPLANE_URL/.test(noUrl.stderr)], [2, true])
  const listed = await member(['tokens', 'list'])
  t.match(listed.stdout, /ci\s+bp_pat_\S+\s+active/)
  t.equal((await member(['tokens', 'revoke', ci.id])).code, 0)
  const after = await member(['--token', ci.token, '--url', platform.origin, 'projects', 'list'])
  t.same({ code: after.code, stderr: after.stderr }, { code: 1, stderr: 'baseplane: This personal access token was revoked\n' })
})

t.test('logout forgets the login', async (t) => {
  const out = await member(['logout'])
  t.match(out.stdout, /forgotten/)
  t.notOk(fs.existsSync(file))
  const local = await member(['projects', 'list'])
  t.equal(local.code, 1, 'without a token the command runs on the (empty) home')
  t.match(local.stderr, /no Baseplane platform/)
})

t.test("the operator's members commands on the catalogue", async (t) => {
  const operator = (args: string[]) => runCli(args, { DATABASE_URL: platform.catalogueUrl, XDG_CONFIG_HOME: path.join(config, 'none'), BASEPLANE_TOKEN: '' })
  const invited = await operator(['members', 'invite', b.ref, 'ops@example.com', 'read-only', '--json'])
  t.equal(invited.code, 0, invited.stderr)
  t.match(JSON.parse(invited.stdout), { email: 'ops@example.com', role: 'read-only', ref: b.ref })
  const role = await operator(['members', 'role', b.ref, 'ops@example.com', 'owner'])
  t.match(role.stdout, `ops@example.com is now owner on ${b.ref}`)
  const bad = await operator(['members', 'role', b.ref, 'ops@example.com', 'king'])
  t.same([bad.code, bad.stderr], [1, 'baseplane: the role must be one of owner, developer, read-only, got "king"\n'])
  const all = await operator(['members', 'list'])
  t.match(all.stdout, new RegExp(`ops@example\\.com\\s+invited\\s+${b.ref}:owner`))
  const { rows } = await controlPlane.catalogue.query<{ kind: string; actor: string }>('select kind, actor from baseplane.events where ref = $1 and kind like $2 order by id', [b.ref, 'member.%'])
  t.same(rows, [
    { kind: 'member.invited', actor: 'operator' },
    { kind: 'member.role_changed', actor: 'operator' },
  ])
  const outbox = await controlPlane.catalogue.query<{ subject: string; html: string }>("select subject, html from baseplane.member_mail where recipient = 'ops@example.com'")
  t.match(outbox.rows[0], { subject: /invited/, html: /\/dashboard\/accept\?token=/ }, 'without SMTP the invitation waits in the outbox')
  t.equal((await operator(['members', 'remove', b.ref, 'ops@example.com'])).code, 0)
})
