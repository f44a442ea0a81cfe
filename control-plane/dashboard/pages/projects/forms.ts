// The new-project form: creates the project (its database, roles and keys)
// and goes to its Overview; a refusal is drawn beside the field it names.
import { refusable, type Saved } from '../../form-state.ts'
import type { DashboardContext, FormInput, FormsPart } from '../../module.ts'
import { projectsScreen } from './screen.ts'
import { createProject } from '../../../projects.ts'

async function newProject(context: DashboardContext, input: FormInput): Promise<Saved> {
  const project = await createProject(context.controlPlane, { name: input.field('name'), plan: input.field('plan') || undefined })
  return { to: `/projects/${project.ref}`, notice: 'created', values: [project.ref] }
}

export function projectsForms(context: DashboardContext): FormsPart {
  return {
    forms: [
      {
        method: 'POST',
        path: '/projects',
        form: refusable({ form: 'create', fields: ['name', 'plan'], run: (input) => newProject(context, input), screen: (input, state) => projectsScreen(context, state, input.caller) }),
      },
    ],
    notices: {
      created: ([ref]) => `Created project ${ref}. Its keys are below; Auth and Push are off until you turn them on under Settings.`,
      deleted: ([ref]) => `Deleted project ${ref} and dropped its database.`,
    },
  }
}
