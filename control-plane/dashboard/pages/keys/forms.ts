// The Keys tab's form: rotate the signing key (signing-keys.ts
// rotateSigningKey, as `baseplane keys REF --rotate-signing-key` and the
// admin API do), after the confirmation the page asks for. A refusal (a key
// already waiting, an unknown algorithm) is drawn beside the form.
import { BaseplaneError } from '../../../../lib/errors.ts'
import { refusable, type Saved } from '../../form-state.ts'
import { NEXT_REQUEST, projectForm, type DashboardContext, type FormInput, type FormsPart } from '../../module.ts'
import { rotateSigningKey, STANDBY_SECONDS, validateSigningAlg } from '../../../signing-keys.ts'
import { keysScreen } from './screen.ts'

async function rotate(context: DashboardContext, input: FormInput): Promise<Saved> {
  const ref = input.params.ref!
  let alg
  try {
    alg = validateSigningAlg(input.field('alg'))
  } catch (error) {
    throw BaseplaneError.is(error) ? error.concerning('alg') : error
  }
  const now = input.field('now') === 'true'
  const view = await rotateSigningKey(context.controlPlane, ref, { alg, now })
  const newest = view.keys.at(-1)!
  return { to: `/projects/${ref}/keys`, notice: now ? 'signing_rotated_now' : 'signing_rotated', values: [newest.alg, newest.kid] }
}

export function keysForms(context: DashboardContext): FormsPart {
  return {
    forms: [
      projectForm(
        '/keys/signing/rotate',
        refusable({ form: 'rotate', fields: ['alg', 'now'], run: (input) => rotate(context, input), screen: (input, state) => keysScreen(context, input.params.ref!, state) }),
      ),
    ],
    notices: {
      signing_rotated: ([alg, kid]) => `New ${alg} signing key ${kid}: published now, it signs from ${STANDBY_SECONDS / 60} minutes on.`,
      signing_rotated_now: ([alg, kid]) => `${alg} signing key ${kid} signs from now. ${NEXT_REQUEST}`,
    },
  }
}
