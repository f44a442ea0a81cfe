import type { ProjectRecord } from '../../lib/catalogue.ts'
import { keysView, productsOn, projectDetailView, projectView } from '../../control-plane/views.ts'
import { requireYes, stringOption, table, type Command } from '../command.ts'
import { databasePhrase, whereOf } from '../where.ts'
import { createProject, deleteProject, getProject, listAllProjects, setProjectPlan, validatePlan } from '../../control-plane/projects.ts'
import { lastRequestOf, MAX_REASON_LENGTH, resumeProject, suspendProject } from '../../control-plane/suspension.ts'

type View = ReturnType<typeof projectView>
type DetailView = ReturnType<typeof projectDetailView>

/** A project's state for its operator: `suspended (reason)`, `paused`, `active`. */
function stateText(view: View): string {
  return view.state === 'suspended' ? `suspended (${view.state_reason})` : view.state
}

/** What a new project has on, and how to turn on what is off: a newcomer otherwise meets Auth's 503 product_disabled first. */
function productsLine(view: View): string {
  const switched = (['auth', 'push'] as const).map((product) => ({ product, name: product === 'auth' ? 'Auth' : 'Push', on: view.products[product] }))
  const on = ['the Data API (REST)', 'GraphQL', ...switched.filter((p) => p.on).map((p) => p.name)]
  const off = switched.filter((p) => !p.on)
  return [
    `on                ${on.slice(0, -1).join(', ')} and ${on.at(-1)}`,
    ...(off.length === 0
      ? []
      : [`off               ${off.map((p) => p.name).join(' and ')}: turn ${off.length === 1 ? 'it' : 'them'} on with ${off.map((p) => `baseplane products enable ${p.product} ${view.ref}`).join(' and ')}`]),
  ].join('\n')
}

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
      `base URL          ${result.base_url}\nanon key          ${result.anon_key}\nservice_role key  ${result.service_role_key}\n` +
      productsLine(result),
  },
  {
    words: ['projects', 'list'],
    positionals: [],
    usage: 'projects list',
    summary: 'List projects',
    remote: () => ({ method: 'GET', path: '/projects' }),
    async run(context) {
      const controlPlane = await context.controlPlane()
      return (await listAllProjects(controlPlane)).map((p: ProjectRecord) => projectView(p, context.addressing))
    },
    human: (result: View[], context) =>
      result.length === 0
        ? `No projects in ${databasePhrase(whereOf(context.config))}. Create one with: baseplane projects create --name NAME`
        : table([
            ['REF', 'NAME', 'PLAN', 'STATE', 'PRODUCTS', 'BASE URL'],
            ...result.map((p) => [
              p.ref,
              p.name,
              p.plan,
              stateText(p),
              productsOn(p.products).join(','),
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
      const [ref, plan] = args.positionals as [string, string]
      validatePlan(plan)
      const controlPlane = await context.controlPlane()
      // Read first, so setting the plan it has says so instead of claiming a change (the roles' limits are set again all the same).
      const before = (await getProject(controlPlane, ref)).plan
      const project = await setProjectPlan(controlPlane, ref, plan)
      return { ...projectView(project, context.addressing), changed: before !== project.plan }
    },
    human: (result: View & { changed: boolean }) => (result.changed ? `Project ${result.ref} is now on plan ${result.plan}` : `Project ${result.ref} is already on plan ${result.plan}: nothing changed`),
  },
  {
    words: ['projects', 'show'],
    positionals: ['REF'],
    usage: 'projects show REF',
    summary: 'Show a project: plan, state (and the reason of a suspension), products, database, last request',
    remote: (args) => ({ method: 'GET', path: `/projects/${encodeURIComponent(args.positionals[0]!)}` }),
    async run(context, args) {
      const controlPlane = await context.controlPlane()
      const ref = args.positionals[0]!
      return projectDetailView(await getProject(controlPlane, ref), context.addressing, await lastRequestOf(controlPlane, ref))
    },
    human: (p: DetailView) =>
      [
        `ref           ${p.ref}`,
        `name          ${p.name}`,
        `plan          ${p.plan}`,
        `state         ${p.state}${p.state_changed_at ? ` since ${p.state_changed_at}` : ''}`,
        ...(p.state_reason ? [`reason        ${p.state_reason}`] : []),
        `products      ${productsOn(p.products).join(', ')}`,
        `base URL      ${p.base_url}`,
        `database      ${p.database.name} on server ${p.database.server}`,
        `created       ${p.created_at}`,
        `last request  ${p.last_request_at ?? 'none recorded'}`,
      ].join('\n'),
  },
  {
    words: ['projects', 'suspend'],
    positionals: ['REF'],
    usage: 'projects suspend REF --reason TEXT',
    summary: 'Suspend a project: every service refuses it (403 project_suspended), its roles cannot connect, its push waits; its data is kept',
    options: { reason: { type: 'string' } },
    optionHelp: { reason: `why (1 to ${MAX_REASON_LENGTH} characters): shown to operators (projects list and show, the admin API, the dashboard), never to the project's callers` },
    notes: 'Resume it with: baseplane projects resume REF. Queued push notifications are sent after the resume.',
    fieldFlags: { reason: '--reason' },
    async run(context, args) {
      const project = await suspendProject(await context.controlPlane(), args.positionals[0]!, stringOption(args, 'reason', true))
      return projectView(project, context.addressing)
    },
    human: (result: View) => `Suspended project ${result.ref} (${result.state_reason}). Resume it with: baseplane projects resume ${result.ref}`,
  },
  {
    words: ['projects', 'resume'],
    positionals: ['REF'],
    usage: 'projects resume REF',
    summary: 'Resume a suspended or paused project: it answers again from the next request and sends its queued push',
    async run(context, args) {
      return projectView(await resumeProject(await context.controlPlane(), args.positionals[0]!), context.addressing)
    },
    human: (result: View) => `Resumed project ${result.ref}: it answers again from the next request`,
  },
]
