// `baseplane projects roles ...`: a project's own API roles, besides anon,
// authenticated and service_role (control-plane/project-roles.ts).
import { addProjectRole, listProjectRoles, removeProjectRole, type ProjectRolesView, type RoleAdded, type RoleRemoved } from '../../control-plane/project-roles.ts'
import { API_ROLES } from '../../lib/roles.ts'
import { UsageError, type Command } from '../command.ts'

const USAGE = 'projects roles REF [add NAME | remove NAME]'

type Result = ProjectRolesView | RoleAdded | RoleRemoved

function show(result: Result): string {
  const list = [
    `API roles of ${result.ref} (a token's role claim may name any of them)`,
    `built in  ${API_ROLES.join(', ')}`,
    `added     ${result.roles.length > 0 ? result.roles.join(', ') : '(none)'}`,
  ].join('\n')
  if ('added' in result) {
    const what = result.added ? `Added role ${result.role} to ${result.ref}` : `${result.role} was already a role of ${result.ref} (its grants are made again)`
    return `${what}: accepted from the next request\n${list}`
  }
  if ('removed' in result) return `Removed role ${result.role} from ${result.ref}: refused from the next request\n${list}`
  return list
}

export const roleCommands: Command[] = [
  {
    words: ['projects', 'roles'],
    positionals: ['REF'],
    optionalPositionals: ['add|remove', 'NAME'],
    usage: USAGE,
    summary: "Show (or add, remove) a project's own API roles: tokens may name them, as in Supabase's `grant editor to authenticator`",
    notes: 'NAME: a lowercase letter, then lowercase letters, digits or underscores. Added and removed roles apply from the next request.',
    async run(context, args) {
      const [ref, action, name] = args.positionals as [string, string | undefined, string | undefined]
      if (action !== undefined && action !== 'add' && action !== 'remove') {
        throw new UsageError(`unexpected argument "${action}": use add NAME or remove NAME (usage: baseplane ${USAGE})`)
      }
      if (action !== undefined && name === undefined) throw new UsageError(`${action} needs a role NAME (usage: baseplane ${USAGE})`)
      const controlPlane = await context.controlPlane()
      if (action === 'add') return addProjectRole(controlPlane, ref, name!)
      if (action === 'remove') return removeProjectRole(controlPlane, ref, name!)
      return listProjectRoles(controlPlane, ref)
    },
    human: show,
  },
]
