// The Database tab's forms: reveal the connection string's password (the
// page drawn again with it, never redirected to), save the statement
// timeouts (every input checked, each error beside its own), add a project
// role, remove one. Each calls the control plane's operations
// (role-timeouts.ts, project-roles.ts), as the CLI and the admin API do.
import { BaseplaneError, platformErrors } from '../../../../lib/errors.ts'
import { getRoleTimeouts, readTimeout, setRoleTimeouts, TIMEOUT_FIELDS, type RoleTimeoutsChange } from '../../../role-timeouts.ts'
import { addProjectRole, removeProjectRole } from '../../../project-roles.ts'
import { Checks, NO_STATE, refusable, type FormState, type Saved } from '../../form-state.ts'
import { NEXT_REQUEST, projectForm, type DashboardContext, type FormInput, type FormsPart } from '../../module.ts'
import { databaseScreen, TIMEOUT_LABELS, timeoutText } from './screen.ts'

const databasePath = (ref: string) => `/projects/${ref}/database`

/**
 * The change the form asks for: an emptied input puts its timeout back to the
 * plan's default, an input left as shown changes nothing (so it keeps
 * following the plan), any other value is read as the CLI reads it (a unit
 * required). Every input is checked before anything is saved.
 */
async function submittedTimeouts(context: DashboardContext, input: FormInput): Promise<RoleTimeoutsChange['set']> {
  const current = await getRoleTimeouts(context.controlPlane, input.params.ref!)
  const set: RoleTimeoutsChange['set'] = {}
  const checks = new Checks()
  for (const field of TIMEOUT_FIELDS) {
    const text = input.field(field).trim()
    if (text === '') {
      if (current.custom.includes(field)) set[field] = null
      continue
    }
    if (text === timeoutText(current[field])) continue
    checks.check(() => {
      const read = readTimeout(text, TIMEOUT_LABELS[field])
      if ('problem' in read) throw platformErrors.invalidArgument(read.problem, field)
      if (read.ms !== current[field] || !current.custom.includes(field)) set[field] = read.ms
    })
  }
  checks.settle()
  return set
}

async function saveTimeouts(context: DashboardContext, input: FormInput): Promise<Saved> {
  const ref = input.params.ref!
  const set = await submittedTimeouts(context, input)
  if (Object.keys(set).length === 0) return { to: databasePath(ref), notice: 'timeouts', values: [] }
  const after = await setRoleTimeouts(context.controlPlane, ref, { set })
  const values = Object.keys(set).map((field) => `${field}:${set[field as keyof typeof set] === null ? 'default' : timeoutText(after[field as keyof typeof set])}`)
  return { to: databasePath(ref), notice: 'timeouts', values }
}

async function addRole(context: DashboardContext, input: FormInput): Promise<Saved> {
  const ref = input.params.ref!
  const name = input.field('name').trim()
  const added = await addProjectRole(context.controlPlane, ref, name)
  return { to: databasePath(ref), notice: added.added ? 'role_added' : 'role_kept', values: [name] }
}

async function removeRole(context: DashboardContext, input: FormInput): Promise<Saved> {
  const ref = input.params.ref!
  try {
    await removeProjectRole(context.controlPlane, ref, input.params.role!)
  } catch (error) {
    // Removed meanwhile (another tab, the CLI): said beside the list, not as a missing page.
    if (BaseplaneError.is(error) && error.code === 'role_not_found') throw new BaseplaneError(error.code, error.message, 409)
    throw error
  }
  return { to: databasePath(ref), notice: 'role_removed', values: [input.params.role!] }
}

/** What a notice calls each timeout. */
const NOTICE_NAMES: Record<string, string> = { anon: 'anon', authenticated: 'authenticated', service_role: 'service_role', idle_in_transaction: 'idle in a transaction' }

export function databaseForms(context: DashboardContext): FormsPart {
  const screen = (input: FormInput, state: FormState) => databaseScreen(context, input.params.ref!, state)
  return {
    forms: [
      projectForm('/database/reveal', async (input) => ({ screen: await databaseScreen(context, input.params.ref!, NO_STATE, true) })),
      projectForm('/database/timeouts', refusable({ form: 'timeouts', fields: [...TIMEOUT_FIELDS], run: (input) => saveTimeouts(context, input), screen })),
      projectForm('/database/roles', refusable({ form: 'role_add', fields: ['name'], run: (input) => addRole(context, input), screen })),
      projectForm('/database/roles/:role/remove', refusable({ form: 'role_remove', run: (input) => removeRole(context, input), screen }), { role: '[a-z][a-z0-9_]{0,62}' }),
    ],
    notices: {
      timeouts: (values) => {
        if (values.length === 0) return 'Timeouts saved; nothing changed.'
        const said = values.map((value) => {
          const [field, to] = value.split(':') as [string, string]
          return to === 'default' ? `${NOTICE_NAMES[field] ?? field} back to the plan's default` : `${NOTICE_NAMES[field] ?? field} ${to === '0' ? 'no limit' : to}`
        })
        return `Timeouts saved: ${said.join(', ')}. ${NEXT_REQUEST}`
      },
      role_added: ([role]) => `Role ${role} added: the project's tokens may name it. ${NEXT_REQUEST}`,
      role_kept: ([role]) => `The project already had role ${role}; its grants were made again.`,
      role_removed: ([role]) => `Role ${role} removed: tokens naming it are refused. ${NEXT_REQUEST}`,
    },
  }
}
