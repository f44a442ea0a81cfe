// The Users tab's forms: create and invite a user, and one user's actions
// (recovery link, ban, sign out everywhere, delete, remove a factor), each
// through control-plane/auth-users.ts (Auth's own operations). A refusal is
// drawn beside the field its error names.
import { UUID_SOURCE } from '../../../../lib/uuid.ts'
import { refusable, type FormState, type Saved } from '../../form-state.ts'
import { projectForm, type DashboardContext, type DashboardForm, type FormInput, type FormsPart } from '../../module.ts'
import { listScreen, USER_PARAM, userScreen } from './screen.ts'
import {
  banAuthUser,
  createAuthUser,
  deleteAuthUser,
  getAuthUser,
  inviteAuthUser,
  removeAuthUserFactor,
  sendAuthUserRecovery,
  signOutAuthUserEverywhere,
} from '../../../auth-users.ts'

const userPath = (input: FormInput) => `/projects/${input.params.ref!}/users/${input.params.id!}`

async function createUser(context: DashboardContext, input: FormInput): Promise<Saved> {
  const user = await createAuthUser(context.controlPlane, input.params.ref!, { email: input.field('email'), password: input.field('password') || undefined }, context)
  return { to: `/projects/${input.params.ref!}/users/${user.id}`, notice: 'user_created' }
}

async function inviteUser(context: DashboardContext, input: FormInput): Promise<Saved> {
  const user = await inviteAuthUser(context.controlPlane, input.params.ref!, input.field('email'), context)
  return { to: `/projects/${input.params.ref!}/users/${user.id}`, notice: 'user_invited' }
}

/** One user's action: runs `act`, then back to the user (or `to`) with `notice`. */
interface UserAction {
  form: string
  act: (input: FormInput) => Promise<unknown>
  notice: (input: FormInput) => string
  fields?: string[]
  to?: (input: FormInput) => string
}

function userAction(context: DashboardContext, rest: string, action: UserAction, where: Record<string, string> = {}): DashboardForm {
  const run = async (input: FormInput): Promise<Saved> => {
    await action.act(input)
    return { to: (action.to ?? userPath)(input), notice: action.notice(input) }
  }
  const screen = (input: FormInput, state: FormState) => userScreen(context, input.params.ref!, input.params.id!, state)
  return projectForm(`/users/:id${rest}`, refusable({ form: action.form, fields: action.fields, run, screen }), { ...USER_PARAM, ...where })
}

export function usersForms(context: DashboardContext): FormsPart {
  const { controlPlane } = context
  const list = (input: FormInput, state: FormState) => listScreen(context, input.params.ref!, new URLSearchParams(), state)
  const ids = (input: FormInput): [string, string] => [input.params.ref!, input.params.id!]
  return {
    forms: [
      projectForm('/users', refusable({ form: 'create', fields: ['email'], secret: ['password'], run: (input) => createUser(context, input), screen: list })),
      projectForm('/users/invite', refusable({ form: 'invite', fields: ['email'], run: (input) => inviteUser(context, input), screen: list })),
      userAction(context, '/recovery', {
        form: 'recovery',
        act: async (input) => sendAuthUserRecovery(controlPlane, input.params.ref!, (await getAuthUser(controlPlane, ...ids(input), context)).email ?? '', context),
        notice: () => 'recovery_sent',
      }),
      userAction(context, '/ban', {
        form: 'ban',
        fields: ['duration'],
        act: (input) => banAuthUser(controlPlane, ...ids(input), input.field('duration'), context),
        notice: (input) => (input.field('duration') === 'none' ? 'user_unbanned' : 'user_banned'),
      }),
      userAction(context, '/logout', { form: 'logout', act: (input) => signOutAuthUserEverywhere(controlPlane, ...ids(input), context), notice: () => 'signed_out' }),
      userAction(context, '/delete', { form: 'delete', act: (input) => deleteAuthUser(controlPlane, ...ids(input), context), notice: () => 'user_deleted', to: (input) => `/projects/${input.params.ref!}/users` }),
      userAction(
        context,
        '/factors/:factor/delete',
        { form: 'factor', act: (input) => removeAuthUserFactor(controlPlane, ...ids(input), input.params.factor!, context), notice: () => 'factor_removed' },
        { factor: UUID_SOURCE },
      ),
    ],
    notices: {
      user_created: () => 'User created, with the address confirmed.',
      user_invited: () => 'Invitation sent: the user appears as invited until they follow the link.',
      recovery_sent: () => 'Recovery link sent to the user’s address.',
      user_banned: () => 'Ban saved: the user cannot sign in or refresh a session until it ends.',
      user_unbanned: () => 'Ban lifted: the user can sign in again.',
      signed_out: () => 'Signed out everywhere: every session ended; access tokens already issued run out at their expiry.',
      user_deleted: () => 'User deleted.',
      factor_removed: () => 'Factor removed: the user signs in without it.',
    },
  }
}
