// The Settings tab's forms: change the plan, turn a product on or off, rotate
// the JWT secret and keys, suspend the project (a reason, and its ref typed to
// confirm) or resume it, delete it (typing its ref to confirm).
// A refusal is drawn beside the field it names.
import { platformErrors } from '../../../../lib/errors.ts'
import { Checks, refusable, type FormState, type Saved } from '../../form-state.ts'
import { NEXT_REQUEST, projectForm, type DashboardContext, type FormInput, type FormsPart } from '../../module.ts'
import { PRODUCT_NAMES, settingsScreen } from './screen.ts'
import { deleteProject, getProject, rotateProjectKeys, setProjectPlan, setProjectProduct } from '../../../projects.ts'
import { resumeProject, suspendProject, validateReason } from '../../../suspension.ts'

const settingsPath = (ref: string) => `/projects/${ref}/settings`

/** Refuses the form unless its `confirm` input holds the project's ref. */
export function confirmed(input: FormInput, ref: string): void {
  if (input.field('confirm') !== ref) throw platformErrors.invalidArgument(`Type ${ref} to confirm`, 'confirm')
}

async function changePlan(context: DashboardContext, input: FormInput): Promise<Saved> {
  const ref = input.params.ref!
  const before = (await getProject(context.controlPlane, ref)).plan
  await setProjectPlan(context.controlPlane, ref, input.field('plan'))
  return { to: settingsPath(ref), notice: 'plan', values: [before, input.field('plan')] }
}

async function switchProduct(context: DashboardContext, input: FormInput): Promise<Saved> {
  const on = input.field('enabled') === 'true'
  await setProjectProduct(context.controlPlane, input.params.ref!, input.params.product!, on)
  return { to: settingsPath(input.params.ref!), notice: on ? 'product_on' : 'product_off', values: [input.params.product!] }
}

async function suspendConfirmed(context: DashboardContext, input: FormInput): Promise<Saved> {
  const ref = input.params.ref!
  await getProject(context.controlPlane, ref)
  // The reason and the confirmation are both checked, so each shows its own error.
  const checks = new Checks()
  const reason = checks.check(() => validateReason(input.field('reason')))
  checks.check(() => confirmed(input, ref))
  checks.settle()
  await suspendProject(context.controlPlane, ref, reason!)
  return { to: settingsPath(ref), notice: 'suspended', values: [ref] }
}

async function resume(context: DashboardContext, input: FormInput): Promise<Saved> {
  const ref = input.params.ref!
  await resumeProject(context.controlPlane, ref)
  return { to: settingsPath(ref), notice: 'resumed', values: [ref] }
}

async function deleteConfirmed(context: DashboardContext, input: FormInput): Promise<Saved> {
  const ref = input.params.ref!
  await getProject(context.controlPlane, ref)
  confirmed(input, ref)
  await deleteProject(context.controlPlane, ref)
  return { to: '', notice: 'deleted', values: [ref] }
}

export function settingsForms(context: DashboardContext): FormsPart {
  const screen = async (input: FormInput, state: FormState) => settingsScreen(await getProject(context.controlPlane, input.params.ref!), state)
  return {
    forms: [
      projectForm('/plan', refusable({ form: 'plan', fields: ['plan'], run: (input) => changePlan(context, input), screen })),
      projectForm('/products/:product', refusable({ form: 'product', run: (input) => switchProduct(context, input), screen }), { product: 'auth|push' }),
      projectForm('/keys/rotate', async ({ params }) => {
        await rotateProjectKeys(context.controlPlane, params.ref!)
        return { to: `/projects/${params.ref!}`, notice: 'rotated' }
      }),
      projectForm('/suspend', refusable({ form: 'suspend', fields: ['reason', 'confirm'], run: (input) => suspendConfirmed(context, input), screen })),
      projectForm('/resume', refusable({ form: 'resume', run: (input) => resume(context, input), screen })),
      projectForm('/delete', refusable({ form: 'delete', fields: ['confirm'], run: (input) => deleteConfirmed(context, input), screen })),
    ],
    notices: {
      plan: ([before, after]) => (before === after ? `The plan stays ${after}.` : `Plan changed from ${before} to ${after}. ${NEXT_REQUEST}`),
      product_on: ([product]) => `${PRODUCT_NAMES[product!] ?? product} turned on. ${NEXT_REQUEST}`,
      product_off: ([product]) => `${PRODUCT_NAMES[product!] ?? product} turned off. ${NEXT_REQUEST}`,
      suspended: ([ref]) => `Project ${ref} is suspended: every service refuses it, its roles cannot connect and its push waits. ${NEXT_REQUEST}`,
      resumed: ([ref]) => `Project ${ref} is resumed: it answers again and sends its queued push. ${NEXT_REQUEST}`,
      rotated: () => `New JWT secret, anon key and service_role key; tokens signed with the old secret are refused. ${NEXT_REQUEST}`,
    },
  }
}
