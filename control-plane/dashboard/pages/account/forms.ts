// A member's own account forms (issue 42): change the password, enrol or
// remove the authenticator, create a personal access token (the page drawn
// again with it, shown once, never redirected to: it must not reach a URL)
// and revoke one. Each an operation of control-plane/members.ts.
import { changePassword, createToken, enrolTotp, removeTotp, revokeToken } from '../../../members.ts'
import { BaseplaneError } from '../../../../lib/errors.ts'
import { FormState, NO_STATE, placeOf, refusable, type Saved } from '../../form-state.ts'
import type { DashboardContext, FormInput, FormsPart } from '../../module.ts'
import { accountScreen } from './screen.ts'

const done = (notice: string): Saved => ({ to: '/account', notice })

export function accountForms(context: DashboardContext): FormsPart {
  const screen = (input: FormInput, state: Parameters<typeof accountScreen>[2]) => accountScreen(context, input.caller, state)
  return {
    forms: [
      {
        method: 'POST',
        path: '/account/password',
        form: refusable({
          form: 'password',
          secret: ['current_password', 'new_password'],
          run: async (input) => {
            await changePassword(context.controlPlane, input.caller, input.field('current_password'), input.field('new_password'))
            return done('password_changed')
          },
          screen,
        }),
      },
      {
        method: 'POST',
        path: '/account/totp',
        form: refusable({
          form: 'totp',
          fields: ['code'],
          run: async (input) => {
            await enrolTotp(context.controlPlane, input.caller, input.field('secret'), input.field('code'))
            return done('totp_enrolled')
          },
          screen,
        }),
      },
      {
        method: 'POST',
        path: '/account/totp/remove',
        form: async (input) => {
          await removeTotp(context.controlPlane, input.caller)
          return done('totp_removed')
        },
      },
      {
        method: 'POST',
        path: '/account/tokens',
        form: async (input) => {
          const days = input.field('expires_in_days').trim()
          try {
            const made = await createToken(context.controlPlane, input.caller, { name: input.field('name'), expires_in_days: days === '' ? undefined : /^\d+$/.test(days) ? Number(days) : days })
            return { screen: await accountScreen(context, input.caller, NO_STATE, made.token) }
          } catch (error) {
            if (!BaseplaneError.is(error) || error.status >= 500) throw error
            const spec = { fields: ['name', 'expires_in_days'] }
            const state = new FormState({ form: 'token', fields: { name: input.field('name'), expires_in_days: days }, errors: { [placeOf(error, spec)]: error.message } })
            return { screen: { ...(await accountScreen(context, input.caller, state)), status: 400 } }
          }
        },
      },
      {
        method: 'POST',
        path: '/account/tokens/:id/revoke',
        where: { id: '[0-9a-f-]{36}' },
        form: async (input) => {
          await revokeToken(context.controlPlane, input.caller, input.params.id!)
          return done('token_revoked')
        },
      },
    ],
    notices: {
      password_changed: () => 'Password changed.',
      totp_enrolled: () => 'Authenticator enrolled: sign-in now asks for its code.',
      totp_removed: () => 'Authenticator removed.',
      token_revoked: () => 'Token revoked: it stops working at once.',
    },
  }
}
