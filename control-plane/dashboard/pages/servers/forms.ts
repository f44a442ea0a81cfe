// The servers page's forms: add a server (its URL never drawn back), change
// an added server's budget, drain it or take new projects again, remove one
// that holds no project (after a confirmation). Each calls server-admin.ts,
// as `baseplane servers ...` and the admin API do; a refusal is drawn beside
// the input it concerns.
import { platformErrors } from '../../../../lib/errors.ts'
import { addDatabaseServer, removeDatabaseServer, setDatabaseServerBudget, setDatabaseServerDraining } from '../../../server-admin.ts'
import { Checks, refusable, type FormState, type Saved } from '../../form-state.ts'
import type { DashboardContext, DashboardForm, FormInput, FormsPart } from '../../module.ts'
import { serversScreen } from './screen.ts'

const SERVER_ID = { id: '[a-z0-9_-]{1,40}' } as const

/** A typed budget: a whole number as a number, anything else as typed (the operation refuses it, naming it). */
function budgetOf(text: string): unknown {
  const trimmed = text.trim()
  return /^\d{1,9}$/.test(trimmed) ? Number(trimmed) : trimmed
}

async function add(context: DashboardContext, input: FormInput): Promise<Saved> {
  const url = input.field('url').trim()
  const id = input.field('id').trim()
  const connections = input.field('connections').trim()
  // What can be told from the form alone is said beside its input, every one at once.
  const checks = new Checks()
  checks.check(() => {
    if (!/^postgres(ql)?:\/\/[^/]/.test(url)) throw platformErrors.invalidArgument('The database server URL must look like postgres://user:password@host:5432/postgres', 'url')
  })
  checks.check(() => {
    if (connections !== '' && !/^\d{1,9}$/.test(connections)) throw platformErrors.invalidArgument(`The connection budget must be a whole number, got "${connections}"`, 'connections')
  })
  checks.settle()
  const server = await addDatabaseServer(context.controlPlane, { url, id: id === '' ? undefined : id, connections: connections === '' ? undefined : Number(connections) })
  return { to: '/servers', notice: 'server_added', values: [server.id] }
}

function serverForm(path: string, form: (id: string) => string, fields: string[], run: (context: DashboardContext, input: FormInput) => Promise<Saved>, context: DashboardContext): DashboardForm {
  return {
    method: 'POST',
    path: `/servers/:id${path}`,
    where: SERVER_ID,
    form: refusable({ form: (input) => form(input.params.id!), fields, run: (input) => run(context, input), screen: (_input, state: FormState) => serversScreen(context, state) }),
  }
}

export function serversForms(context: DashboardContext): FormsPart {
  return {
    forms: [
      { method: 'POST', path: '/servers', form: refusable({ form: 'add', fields: ['id', 'connections'], secret: ['url'], run: (input) => add(context, input), screen: (_input, state) => serversScreen(context, state) }) },
      serverForm('/budget', (id) => `budget-${id}`, ['connections'], async (context, input) => {
        const server = await setDatabaseServerBudget(context.controlPlane, input.params.id!, budgetOf(input.field('connections')))
        return { to: '/servers', notice: 'server_budget', values: [server.id, String(server.connectionBudget)] }
      }, context),
      serverForm('/drain', (id) => `server-${id}`, [], async (context, input) => {
        const draining = input.field('draining') === 'true'
        await setDatabaseServerDraining(context.controlPlane, input.params.id!, draining)
        return { to: '/servers', notice: draining ? 'server_draining' : 'server_open', values: [input.params.id!] }
      }, context),
      serverForm('/remove', (id) => `server-${id}`, [], async (context, input) => {
        await removeDatabaseServer(context.controlPlane, input.params.id!)
        return { to: '/servers', notice: 'server_removed', values: [input.params.id!] }
      }, context),
    ],
    notices: {
      server_added: ([id]) => `Database server ${id} added: new projects may be placed there.`,
      server_budget: ([id, budget]) => `Database server ${id} now has a budget of ${budget} connections.`,
      server_draining: ([id]) => `Database server ${id} is draining: it keeps its projects and takes no new one.`,
      server_open: ([id]) => `Database server ${id} takes new projects again.`,
      server_removed: ([id]) => `Database server ${id} removed from the platform; its databases were not touched.`,
    },
  }
}
