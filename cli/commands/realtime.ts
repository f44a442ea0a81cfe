// `baseplane realtime REF`: a project's Realtime: its plan's limits (lib/plans.ts
// REALTIME_LIMITS, each node taking an equal share on a fleet) and the messages
// it sent this month. A node's open sockets are on its /metrics
// (`baseplane_realtime_connections`): they live in each node's memory.
import { getProject } from '../../control-plane/projects.ts'
import { projectUsage } from '../../control-plane/usage.ts'
import { REALTIME_LIMITS, type Plan, type RealtimeLimits } from '../../lib/plans.ts'
import { table, type Command } from '../command.ts'

interface RealtimeView {
  ref: string
  plan: Plan
  limits: RealtimeLimits
  month: string
  messages: number
  peak_connections: number
}

const kb = (bytes: number) => `${Math.round(bytes / 1024).toLocaleString('en')} KB`
const count = (n: number) => n.toLocaleString('en')

function human(view: RealtimeView): string {
  const { limits } = view
  return [
    `Realtime of ${view.ref} (plan ${view.plan}; Supabase's published limits, each node of a fleet taking an equal share)`,
    '',
    table([
      ['LIMIT', 'FIGURE'],
      ['concurrent connections', count(limits.connections)],
      ['messages per second', count(limits.messagesPerSecond)],
      ['channel joins per second', count(limits.joinsPerSecond)],
      ['channels per connection', count(limits.channelsPerConnection)],
      ['presence messages per second', count(limits.presencePerSecond)],
      ['broadcast payload', kb(limits.payloadBytes)],
    ]),
    '',
    `messages in ${view.month} (UTC): ${count(view.messages)}`,
    `peak connections in ${view.month}: ${count(view.peak_connections)} (the most sockets open at once in a minute, every node)`,
    'open sockets: each node\'s /metrics, baseplane_realtime_connections{project="' + view.ref + '"}',
  ].join('\n')
}

export const realtimeCommands: Command[] = [
  {
    words: ['realtime'],
    positionals: ['REF'],
    usage: 'realtime REF [--json]',
    summary: "A project's Realtime limits, and its messages and peak connections this month",
    async run(context, args) {
      const controlPlane = await context.controlPlane()
      const ref = args.positionals[0]!
      const project = await getProject(controlPlane, ref)
      const usage = await projectUsage(controlPlane, ref)
      return { ref, plan: project.plan, limits: REALTIME_LIMITS[project.plan], month: usage.month, messages: usage.totals.realtime_messages ?? 0, peak_connections: usage.totals.realtime_peak_connections ?? 0 } satisfies RealtimeView
    },
    human: (view: RealtimeView) => human(view),
  },
]
