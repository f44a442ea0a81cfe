import type { ProjectRecord } from '../../lib/catalogue.ts'
import { keysView, projectView } from '../../control-plane/views.ts'
import { requireYes, stringOption, table, type Command } from '../command.ts'
import { databasePhrase, whereOf } from '../where.ts'
import { createProject, deleteProject, listAllProjects, setProjectPlan } from '../../control-plane/projects.ts'

type View = ReturnType<typeof projectView>

export const projectCommands: Command[] = [
  {
    words: ['projects', 'create'],
    positionals: [],
    usage: 'projects create --name NAME [--plan free|plus|pro|business]',
    summary: 'Create a project with its own database and keys',
    options: { name: { type: 'string' }, plan: { type: 'string' } },
    optionHelp: { name: 'the project\'s name (1 to 200 characters); the ref is 20 random letters, not made from it', plan: 'free (default), plus, pro or business: its fair shares and limits' },
    async run(context, args) {
      const controlPlane = await context.controlPlane()
      const project = await createProject(controlPlane, { name: stringOption(args, 'name', true), plan: stringOption(args, 'plan', false) })
      return { ...projectView(project, context.addressing), ...keysView(project, context.addressing) }
    },
    human: (result: View & ReturnType<typeof keysView>) =>
      `Created project ${result.ref} (${result.name}, plan ${result.plan})\n` +
      `base URL          ${result.base_url}\nanon key          ${result.anon_key}\nservice_role key  ${result.service_role_key}`,
  },
  {
    words: ['projects', 'list'],
    positionals: [],
    usage: 'projects list',
    summary: 'List projects',
    async run(context) {
      const controlPlane = await context.controlPlane()
      return (await listAllProjects(controlPlane)).map((p: ProjectRecord) => projectView(p, context.addressing))
    },
    human: (result: View[], context) =>
      result.length === 0
        ? `No projects in ${databasePhrase(whereOf(context.config))}. Create one with: baseplane projects create --name NAME`
        : table([
            ['REF', 'NAME', 'PLAN', 'PRODUCTS', 'BASE URL'],
            ...result.map((p) => [
              p.ref,
              p.name,
              p.plan,
              ['graphql', p.products.auth ? 'auth' : '', p.products.push ? 'push' : ''].filter(Boolean).join(','),
              p.base_url,
            ]),
          ]),
  },
  {
    words: ['projects', 'delete'],
    positionals: ['REF'],
    usage: 'projects delete REF --yes',
    summary: 'Delete a project and drop its database',
    options: { yes: { type: 'boolean' } },
    optionHelp: { yes: 'confirm: the project\'s database, roles and keys are gone for good' },
    async run(context, args) {
      const ref = args.positionals[0]!
      requireYes(args, `deleting ${ref} drops its database`)
      await deleteProject(await context.controlPlane(), ref)
      return { ref, deleted: true }
    },
    human: (result: { ref: string }) => `Deleted project ${result.ref}`,
  },
  {
    words: ['projects', 'plan'],
    positionals: ['REF', 'PLAN'],
    usage: 'projects plan REF free|plus|pro|business',
    summary: 'Change the plan of a project',
    async run(context, args) {
      const project = await setProjectPlan(await context.controlPlane(), args.positionals[0]!, args.positionals[1]!)
      return projectView(project, context.addressing)
    },
    human: (result: View) => `Project ${result.ref} is now on plan ${result.plan}`,
  },
]
