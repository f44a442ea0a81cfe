// The Members tab's forms (issue 42): invite a person with a role, change a
// member's role, remove a member. The owner's (and the operator's); each an
// operation of control-plane/members.ts, which appends its event with the actor.
import { inviteMember, removeMember, setMemberRole } from '../../../members.ts'
import { refusable, type Saved } from '../../form-state.ts'
import { projectForm, type DashboardContext, type DashboardForm, type FormInput, type FormsPart } from '../../module.ts'
import { membersScreen } from './screen.ts'

const EMAIL_PARAM = { email: '[^/]{3,254}' }

function owners(form: DashboardForm): DashboardForm {
  return { ...form, access: 'owner', ownEvents: true }
}

export function membersForms(context: DashboardContext): FormsPart {
  const screen = (input: FormInput, state: Parameters<typeof membersScreen>[3]) => membersScreen(context, input.params.ref!, input.caller, state)
  const back = (ref: string, notice: string): Saved => ({ to: `/projects/${ref}/members`, notice })
  return {
    forms: [
      owners(
        projectForm(
          '/members',
          refusable({
            form: 'invite',
            fields: ['email', 'role'],
            run: async (input) => {
              const ref = input.params.ref!
              await inviteMember(context.controlPlane, input.caller, { email: input.field('email'), projects: [{ ref, role: input.field('role') }] }, context)
              return back(ref, 'member_invited')
            },
            screen,
          }),
        ),
      ),
      owners(
        projectForm(
          '/members/:email/role',
          refusable({
            form: 'member',
            run: async (input) => {
              await setMemberRole(context.controlPlane, input.params.ref!, decodeURIComponent(input.params.email!), input.field('role'))
              return back(input.params.ref!, 'member_role_changed')
            },
            screen,
          }),
          EMAIL_PARAM,
        ),
      ),
      owners(
        projectForm(
          '/members/:email/remove',
          refusable({
            form: 'member',
            run: async (input) => {
              await removeMember(context.controlPlane, input.params.ref!, decodeURIComponent(input.params.email!))
              return back(input.params.ref!, 'member_removed')
            },
            screen,
          }),
          EMAIL_PARAM,
        ),
      ),
    ],
    notices: {
      member_invited: () => 'Invitation sent. The person chooses a password from the mail and signs in as a member.',
      member_role_changed: () => 'Role changed. It applies from their next request.',
      member_removed: () => 'Member removed from the project.',
    },
  }
}
