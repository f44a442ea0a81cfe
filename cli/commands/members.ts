// Members (issue 42): `members list|invite|role|remove` (the operator on the
// platform's home; an owner with its token for its projects), `tokens
// list|create|revoke` (a member's own, with its token), and `login`/`logout`,
// which keep a member's token and the platform's address in the user's config
// (cli/member-login.ts).
import { BaseplaneError } from '../../lib/errors.ts'
import { OPERATOR, MEMBER_ROLES } from '../../control-plane/access.ts'
import { inviteMember, listMembers, projectMembers, removeMember, setMemberRole, type MembershipView, type MemberView, type TokenView } from '../../control-plane/members.ts'
import { refusedValue, stringOption, table, UsageError, type CliContext, type Command } from '../command.ts'
import { forgetLogin, saveLogin, verifyLogin } from '../member-login.ts'

const mailOf = (context: CliContext) => ({ addressing: context.addressing, mail: { smtpUrl: context.config.smtpUrl, from: context.config.mailFrom } })
const enc = encodeURIComponent

function membershipTable(rows: MembershipView[]): string {
  return rows.length === 0 ? 'No members.' : table([['EMAIL', 'ROLE', 'JOINED'], ...rows.map((m) => [m.email, m.role, m.joined ? 'yes' : 'invited'])])
}

function role(args: { positionals: string[] }, index: number): string {
  const value = args.positionals[index]!
  if (!(MEMBER_ROLES as readonly string[]).includes(value)) throw refusedValue(`the role must be one of ${MEMBER_ROLES.join(', ')}, got "${value}"`)
  return value
}

export const memberCommands: Command[] = [
  {
    words: ['members', 'list'],
    positionals: [],
    optionalPositionals: ['REF'],
    usage: 'members list [REF]',
    summary: "List the members: everyone (the operator's), or a project's with their roles",
    async run(context, args) {
      const ref = args.positionals[0]
      const controlPlane = await context.controlPlane()
      return ref === undefined ? listMembers(controlPlane) : projectMembers(controlPlane, ref)
    },
    remote: (args) => {
      if (args.positionals[0] === undefined) throw new UsageError("a member lists a project's members: baseplane members list REF")
      return { method: 'GET', path: `/projects/${enc(args.positionals[0])}/members` }
    },
    human: (result: MembershipView[] | MemberView[]) => {
      if (result.length > 0 && 'projects' in result[0]!) {
        return table([['EMAIL', 'JOINED', 'PROJECTS'], ...(result as MemberView[]).map((m) => [m.email, m.joined ? 'yes' : 'invited', m.projects.map((p) => `${p.ref}:${p.role}`).join(' ')])])
      }
      return membershipTable(result as MembershipView[])
    },
  },
  {
    words: ['members', 'invite'],
    positionals: ['REF', 'EMAIL', 'ROLE'],
    usage: 'members invite REF EMAIL owner|developer|read-only',
    summary: 'Invite a person to a project with a role (the invitation mail sets their password)',
    async run(context, args) {
      const [ref, email] = args.positionals as [string, string]
      const controlPlane = await context.controlPlane()
      await inviteMember(controlPlane, OPERATOR, { email, projects: [{ ref, role: role(args, 2) }] }, mailOf(context))
      return (await projectMembers(controlPlane, ref)).find((m) => m.email === email.trim().toLowerCase())
    },
    remote: (args) => ({ method: 'POST', path: `/projects/${enc(args.positionals[0]!)}/members`, body: { email: args.positionals[1], role: role(args, 2) } }),
    human: (result: MembershipView) => `Invited ${result.email} to ${result.ref} as ${result.role}${result.joined ? ' (already a member elsewhere: told by mail)' : ': the mail has the link that sets the password'}`,
  },
  {
    words: ['members', 'role'],
    positionals: ['REF', 'EMAIL', 'ROLE'],
    usage: 'members role REF EMAIL owner|developer|read-only',
    summary: "Change a member's role on a project",
    async run(context, args) {
      const [ref, email] = args.positionals as [string, string]
      return setMemberRole(await context.controlPlane(), ref, email, role(args, 2))
    },
    remote: (args) => ({ method: 'PATCH', path: `/projects/${enc(args.positionals[0]!)}/members/${enc(args.positionals[1]!)}`, body: { role: role(args, 2) } }),
    human: (result: MembershipView) => `${result.email} is now ${result.role} on ${result.ref}`,
  },
  {
    words: ['members', 'remove'],
    positionals: ['REF', 'EMAIL'],
    usage: 'members remove REF EMAIL',
    summary: 'Remove a member from a project (their account and other projects stay)',
    async run(context, args) {
      const [ref, email] = args.positionals as [string, string]
      await removeMember(await context.controlPlane(), ref, email)
      return null
    },
    remote: (args) => ({ method: 'DELETE', path: `/projects/${enc(args.positionals[0]!)}/members/${enc(args.positionals[1]!)}` }),
    human: () => 'Removed.',
  },
  {
    words: ['tokens', 'list'],
    positionals: [],
    usage: 'tokens list',
    summary: 'List your personal access tokens (a member, with --token or after login)',
    run: async () => {
      throw memberOnly()
    },
    remote: () => ({ method: 'GET', path: '/account/tokens' }),
    human: (result: TokenView[]) =>
      result.length === 0 ? 'No tokens.' : table([['ID', 'NAME', 'STARTS', 'STATE', 'EXPIRES', 'LAST USED'], ...result.map((t) => [t.id, t.name, t.prefix, t.state, t.expires_at.slice(0, 10), t.last_used_at ?? 'never'])]),
  },
  {
    words: ['tokens', 'create'],
    positionals: ['NAME'],
    usage: 'tokens create NAME [--days N]',
    summary: 'Make a personal access token (printed once)',
    options: { days: { type: 'string' } },
    optionHelp: { days: 'days until it expires, 1 to 366 (default 30)' },
    run: async () => {
      throw memberOnly()
    },
    remote: (args) => {
      const days = stringOption(args, 'days', false)
      return { method: 'POST', path: '/account/tokens', body: { name: args.positionals[0], ...(days === undefined ? {} : { expires_in_days: /^\d+$/.test(days) ? Number(days) : days }) } }
    },
    fieldFlags: { expires_in_days: '--days' },
    human: (result: TokenView & { token: string }) => `${result.token}\n(token "${result.name}", expires ${result.expires_at.slice(0, 10)}: it is shown this once)`,
  },
  {
    words: ['tokens', 'revoke'],
    positionals: ['ID'],
    usage: 'tokens revoke ID',
    summary: 'Revoke one of your personal access tokens: it stops working at once',
    run: async () => {
      throw memberOnly()
    },
    remote: (args) => ({ method: 'DELETE', path: `/account/tokens/${enc(args.positionals[0]!)}` }),
    human: (result: TokenView) => `Revoked token "${result.name}".`,
  },
  {
    words: ['login'],
    positionals: [],
    usage: 'login --url URL [--token T]',
    summary: "Keep a member's personal access token (from --token or standard input) and the platform's address in your config",
    notes:
      'The token is checked against the platform, then saved with the address in $XDG_CONFIG_HOME/baseplane/config.json (else ~/.config/baseplane/config.json), readable by you alone. Commands that members may run then call the admin API with it; the others are refused until `baseplane logout`.',
    run: async (context) => {
      const { url, token } = context.globals ?? {}
      if (url === undefined) throw new UsageError('login needs --url (the platform, such as https://baseplane.example.com)')
      const given = token ?? (await context.readStdin()).trim()
      if (given === '') throw new UsageError('login needs a token: --token T, or the token on standard input')
      const account = await verifyLogin(url, given)
      const file = saveLogin({ url, token: given })
      return { email: account.email, url, config: file }
    },
    human: (result: { email: string; url: string; config: string }) => `Signed in to ${result.url} as ${result.email} (saved in ${result.config})`,
  },
  {
    words: ['logout'],
    positionals: [],
    usage: 'logout',
    summary: 'Forget the saved member token',
    run: async () => ({ forgotten: forgetLogin() }),
    human: (result: { forgotten: boolean }) => (result.forgotten ? 'Signed out: the saved token is forgotten.' : 'No saved token.'),
  },
]

function memberOnly(): BaseplaneError {
  return new BaseplaneError('member_only', "this is a member's own: run it with --token T (and --url or BASEPLANE_URL), or after `baseplane login`", 403)
}
