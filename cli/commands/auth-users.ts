// `baseplane auth users list|create|invite|delete REF ...`: a project's Auth users,
// through control-plane/auth-users.ts (Auth's own operations on the project's
// database, as the dashboard's Users tab); no running server is needed.
import { DEFAULT_ANONYMOUS_AGE_DAYS, purgeAnonymousUsers } from '../../control-plane/anonymous-users.ts'
import { createAuthUser, deleteAuthUser, inviteAuthUser, listAuthUsers, type AuthUser, type AuthUsersContext, type UserPage } from '../../control-plane/auth-users.ts'
import { integerOption, refusedValue, requireYes, stringOption, table, type CliContext, type Command } from '../command.ts'
import { isUuid } from '../../lib/uuid.ts'

/** Where the project's API is and how mail goes out, as this command's configuration says. */
function authContext(context: CliContext): AuthUsersContext {
  return { addressing: context.addressing, mail: { smtpUrl: context.config.smtpUrl, from: context.config.mailFrom } }
}

export const authUserCommands: Command[] = [
  {
    words: ['auth', 'users', 'list'],
    positionals: ['REF'],
    usage: 'auth users list REF [--email TEXT] [--page N] [--per-page N]',
    summary: "List a project's Auth users, newest first",
    options: { email: { type: 'string' }, page: { type: 'string' }, 'per-page': { type: 'string' } },
    optionHelp: { email: 'only users whose email contains TEXT', page: 'which page, from 1 (default 1)', 'per-page': 'users a page, 1 to 1000 (default 50)' },
    async run(context, args) {
      return listAuthUsers(
        await context.controlPlane(),
        args.positionals[0]!,
        {
          email: stringOption(args, 'email', false),
          page: integerOption(args, 'page', { min: 1, max: 1_000_000 }) ?? 1,
          perPage: integerOption(args, 'per-page', { min: 1, max: 1000 }) ?? 50,
        },
        authContext(context),
      )
    },
    human: (page: UserPage) =>
      page.total === 0
        ? 'No users.'
        : `${table([
            ['ID', 'EMAIL', 'LAST SIGN-IN', 'CREATED'],
            ...page.users.map((u) => [u.id, u.email ?? '', u.last_sign_in_at ?? 'never', u.created_at]),
          ])}\n${page.total} user${page.total === 1 ? '' : 's'}, page ${page.page} of ${Math.max(1, Math.ceil(page.total / page.per_page))}`,
  },
  {
    words: ['auth', 'users', 'create'],
    positionals: ['REF', 'EMAIL'],
    usage: 'auth users create REF EMAIL [--password-stdin] [--unconfirmed]',
    summary: 'Create a user, its email confirmed; with a password read from standard input, it can sign in at once',
    options: { 'password-stdin': { type: 'boolean' }, unconfirmed: { type: 'boolean' } },
    optionHelp: {
      'password-stdin': "read the user's password from standard input (never from the command line); without it the user signs in by link or code",
      unconfirmed: 'leave the email unconfirmed (the user cannot sign in with a password until it is)',
    },
    async run(context, args) {
      let password: string | undefined
      if (args.values['password-stdin'] === true) {
        // One line, as typed or piped: the line break that ends it is not part of the password.
        password = (await context.readStdin()).replace(/\r?\n$/, '')
        if (password === '') throw refusedValue('--password-stdin read an empty password')
      }
      return createAuthUser(await context.controlPlane(), args.positionals[0]!, { email: args.positionals[1]!, password, confirm: args.values.unconfirmed !== true }, authContext(context))
    },
    human: (user: AuthUser) => `Created ${user.email} (user ${user.id})${user.email_confirmed_at ? '' : ', email not confirmed'}`,
  },
  {
    words: ['auth', 'users', 'invite'],
    positionals: ['REF', 'EMAIL'],
    usage: 'auth users invite REF EMAIL',
    summary: 'Send an invitation mail (the invite template); the user appears as invited',
    async run(context, args) {
      return inviteAuthUser(await context.controlPlane(), args.positionals[0]!, args.positionals[1]!, authContext(context))
    },
    human: (user: AuthUser) => `Invited ${user.email} (user ${user.id})`,
  },
  {
    words: ['auth', 'users', 'delete'],
    positionals: ['REF', 'USER'],
    usage: 'auth users delete REF USER --yes',
    summary: 'Delete a user (by id or exact email) and everything Auth keeps about them',
    options: { yes: { type: 'boolean' } },
    optionHelp: { yes: 'confirm: the user, their identities, factors and sessions are gone for good' },
    async run(context, args) {
      const [ref, given] = [args.positionals[0]!, args.positionals[1]!]
      requireYes(args, `deleting user ${given} cannot be undone`)
      const controlPlane = await context.controlPlane()
      let id = given
      if (!isUuid(given)) {
        const match = (await listAuthUsers(controlPlane, ref, { email: given, perPage: 1000 }, authContext(context))).users.find((u) => u.email?.toLowerCase() === given.toLowerCase())
        if (!match) throw refusedValue(`project ${ref} has no user with the email ${given}`)
        id = match.id
      }
      await deleteAuthUser(controlPlane, ref, id, authContext(context))
      return { ref, deleted: id }
    },
    human: (result: { deleted: string }) => `Deleted user ${result.deleted}`,
  },
  {
    words: ['auth', 'users', 'purge-anonymous'],
    positionals: ['REF'],
    usage: 'auth users purge-anonymous REF [--older-than DAYS] --yes',
    summary: 'Delete the anonymous users created more than DAYS days ago (default 30), with their sessions',
    options: { 'older-than': { type: 'string' }, yes: { type: 'boolean' } },
    optionHelp: {
      'older-than': `age in days (0 to 36500; default ${DEFAULT_ANONYMOUS_AGE_DAYS}); users given an email or an identity are no longer anonymous and stay`,
      yes: 'confirm: the users are gone for good',
    },
    async run(context, args) {
      const ref = args.positionals[0]!
      const days = integerOption(args, 'older-than', { min: 0, max: 36500 }) ?? DEFAULT_ANONYMOUS_AGE_DAYS
      requireYes(args, 'deleting anonymous users cannot be undone')
      return { ref, older_than_days: days, deleted: await purgeAnonymousUsers(await context.controlPlane(), ref, days) }
    },
    human: (result: { ref: string; older_than_days: number; deleted: number }) =>
      `Deleted ${result.deleted} anonymous user${result.deleted === 1 ? '' : 's'} of ${result.ref} created more than ${result.older_than_days} days ago`,
  },
]
