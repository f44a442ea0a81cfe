import { serverStateView, serverView } from '../../control-plane/views.ts'
import { requireYes, stringOption, table, type Command } from '../command.ts'
import type { ControlPlane } from '../../control-plane/control-plane.ts'
import { addDatabaseServer, databaseServerStates, listDatabaseServers, removeDatabaseServer, setDatabaseServerBudget, setDatabaseServerDraining } from '../../control-plane/server-admin.ts'
import { DEFAULT_SERVER, defaultServerRefusal } from '../../control-plane/servers.ts'

type View = ReturnType<typeof serverView>
type StateView = ReturnType<typeof serverStateView>

function listing(servers: StateView[]): string {
  return table([
    ['ID', 'URL', 'STATE', 'BUDGET', 'PROJECTS', 'ROOM', 'IN USE'],
    ...servers.map((s) => [
      s.id,
      s.url,
      s.state + (s.draining ? ', draining' : ''),
      String(s.connection_budget),
      String(s.projects),
      String(s.room),
      s.connections_in_use === null ? '-' : String(s.connections_in_use),
    ]),
  ])
}

/** A whole number as a number; anything else as given, so the refusal quotes it. */
function connectionsOf(given: string | undefined): unknown {
  return given !== undefined && /^\d+$/.test(given) ? Number(given) : given
}

/** An added server's budget now; undefined for one that is not listed (the operation then refuses it). */
async function budgetOf(controlPlane: ControlPlane, id: string): Promise<number | undefined> {
  return (await listDatabaseServers(controlPlane)).find((server) => server.id === id)?.connectionBudget
}

export const serverCommands: Command[] = [
  {
    words: ['servers', 'add'],
    positionals: ['URL'],
    usage: 'servers add URL [--id ID] [--connections N]',
    summary: 'Add a PostgreSQL server (superuser URL) for new projects',
    options: { id: { type: 'string' }, connections: { type: 'string' } },
    optionHelp: {
      id: 'a name for it (lowercase letters, digits, - or _; default: made from the host)',
      connections: 'connections a data-plane process may open to it (default: what the server allows, less a reserve)',
    },
    notes: 'URL: postgres://superuser:password@host:5432/postgres. New projects go to the server with the most room.',
    async run(context, args) {
      const connections = stringOption(args, 'connections', false)
      const server = await addDatabaseServer(await context.controlPlane(), {
        url: args.positionals[0]!,
        id: stringOption(args, 'id', false),
        // Not a number: passed on as given, so the message quotes it.
        connections: connectionsOf(connections),
      })
      return serverView(server)
    },
    human: (result: View) => `Added database server ${result.id} (${result.url}), connection budget ${result.connection_budget}`,
  },
  {
    words: ['servers', 'list'],
    positionals: [],
    usage: 'servers list',
    summary: 'List database servers: whether each answers now, budget, projects, room for more, connections in use',
    notes: 'ROOM: the budget less what its projects\' plans may use in one data-plane process (free 12, plus 18, pro and business 24). IN USE: connections the projects\' API roles hold there now, every node\'s.',
    async run(context) {
      return (await databaseServerStates(await context.controlPlane())).map(serverStateView)
    },
    human: listing,
  },
  {
    words: ['servers', 'set'],
    positionals: ['ID'],
    usage: 'servers set ID --connections N',
    summary: 'Change an added server\'s connection budget (checked against what the server allows)',
    options: { connections: { type: 'string' } },
    optionHelp: { connections: 'connections a data-plane process may open to it' },
    async run(context, args) {
      const id = args.positionals[0]!
      const connections = connectionsOf(stringOption(args, 'connections', true))
      const controlPlane = await context.controlPlane()
      const before = await budgetOf(controlPlane, id)
      const server = await setDatabaseServerBudget(controlPlane, id, connections)
      return { ...serverView(server), changed: before !== server.connectionBudget }
    },
    human: (result: View & { changed: boolean }) =>
      result.changed ? `Database server ${result.id}: connection budget ${result.connection_budget}` : `Database server ${result.id} already has connection budget ${result.connection_budget}: nothing changed`,
  },
  {
    words: ['servers', 'drain'],
    positionals: ['ID'],
    usage: 'servers drain ID [--undo]',
    summary: 'Stop placing new projects on an added server (its projects stay); --undo places them again',
    options: { undo: { type: 'boolean' } },
    optionHelp: { undo: 'take new projects again' },
    async run(context, args) {
      const id = args.positionals[0]!
      const controlPlane = await context.controlPlane()
      const before = (await listDatabaseServers(controlPlane)).find((server) => server.id === id)?.draining
      const server = await setDatabaseServerDraining(controlPlane, id, args.values.undo !== true)
      return { ...serverView(server), changed: before !== server.draining }
    },
    human: (result: View & { changed: boolean }) => {
      const projects = `its ${result.projects} stay`
      if (result.draining) return result.changed ? `Database server ${result.id} takes no new project; ${projects}` : `Database server ${result.id} already takes no new project (${projects}): nothing changed`
      if (!result.changed) return `Database server ${result.id} already takes new projects${result.id === DEFAULT_SERVER ? ' (the default server never drains)' : ''}: nothing changed`
      return `Database server ${result.id} takes new projects again`
    },
  },
  {
    words: ['servers', 'remove'],
    positionals: ['ID'],
    usage: 'servers remove ID --yes',
    summary: 'Forget an added server that holds no project',
    options: { yes: { type: 'boolean' } },
    optionHelp: { yes: 'confirm' },
    async run(context, args) {
      const id = args.positionals[0]!
      // Asking to confirm what cannot be done would only delay the reason.
      if (id === DEFAULT_SERVER) throw defaultServerRefusal('remove')
      requireYes(args, `removing database server ${id} from the platform`)
      await removeDatabaseServer(await context.controlPlane(), id)
      return { id, removed: true }
    },
    human: (result: { id: string }) => `Removed database server ${result.id}`,
  },
]
