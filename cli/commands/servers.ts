import { serverView } from '../../control-plane/views.ts'
import { stringOption, table, type Command } from '../command.ts'

type View = ReturnType<typeof serverView>

function listing(servers: View[]): string {
  return table([
    ['ID', 'URL', 'BUDGET', 'PROJECTS', 'ROOM'],
    ...servers.map((s) => [s.id, s.url, String(s.connection_budget), String(s.projects), String(s.room)]),
  ])
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
      const server = await (await context.controlPlane()).addServer({
        url: args.positionals[0]!,
        id: stringOption(args, 'id', false),
        // Not a number: passed on as given, so the message quotes it.
        connections: connections !== undefined && /^\d+$/.test(connections) ? Number(connections) : connections,
      })
      return serverView(server)
    },
    human: (result: View) => `Added database server ${result.id} (${result.url}), connection budget ${result.connection_budget}`,
  },
  {
    words: ['servers', 'list'],
    positionals: [],
    usage: 'servers list',
    summary: 'List database servers: budget, projects and room for more',
    async run(context) {
      return (await (await context.controlPlane()).listServers()).map(serverView)
    },
    human: listing,
  },
]
