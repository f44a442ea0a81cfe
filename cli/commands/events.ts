// `baseplane events [--project REF] [--kind K] [--since ISO] [--limit N] [--before ID] [--json]`:
// the fleet's events newest first (project created, deleted, plan changed,
// suspended, paused, resumed), with how their operator webhook delivery
// stands, as `GET /platform/v1/events` answers them.
import { EVENT_KINDS, listEvents, type EventPage, type EventView } from '../../control-plane/events.ts'
import { integerOption, stringOption, table, type Command } from '../command.ts'

/** What a kind carries, in a few words (data's fields otherwise). */
function detail(event: EventView): string {
  const data = event.data
  switch (event.kind) {
    case 'project.plan_changed':
      return `${String(data.from)} -> ${String(data.to)}`
    case 'project.suspended':
      return String(data.reason)
    case 'project.resumed':
      return `from ${String(data.from)}, by ${String(data.by)}`
    case 'project.paused':
      return `no request since ${String(data.last_request_at ?? 'it was made or resumed')}`
    default:
      return Object.entries(data)
        .map(([key, value]) => `${key} ${typeof value === 'string' ? value : JSON.stringify(value)}`)
        .join(', ')
  }
}

function delivery(event: EventView): string {
  const d = event.delivery
  if (d.state === 'none') return ''
  if (d.state === 'delivered') return 'delivered'
  return `${d.state} (${d.attempts} attempt${d.attempts === 1 ? '' : 's'}${d.last_error ? `: ${d.last_error}` : ''})`
}

export const eventsCommand: Command = {
  words: ['events'],
  positionals: [],
  usage: 'events [--project REF] [--kind KIND] [--since ISO] [--limit N] [--before ID] [--json]',
  summary: "The fleet's events, newest first: projects created, deleted, their plans changed, suspended, paused, resumed",
  options: { project: { type: 'string' }, kind: { type: 'string' }, since: { type: 'string' }, limit: { type: 'string' }, before: { type: 'string' } },
  optionHelp: {
    project: "only this project's (a deleted project's events are kept)",
    kind: `only this kind: ${EVENT_KINDS.join(', ')}`,
    since: 'only events at or after this time: 2026-05-01 or 2026-05-01T12:00:00Z',
    limit: 'how many, 1 to 1000 (default 50)',
    before: 'only events older than this id (the next page: the last id shown)',
  },
  notes: 'With BASEPLANE_OPERATOR_WEBHOOK_URL set, each event is also posted to the operator webhook; the last column says how that stands.',
  fieldFlags: { project: '--project', kind: '--kind', since: '--since', limit: '--limit', before: '--before' },
  async run(context, args) {
    return listEvents(await context.controlPlane(), {
      project: stringOption(args, 'project', false),
      kind: stringOption(args, 'kind', false),
      since: stringOption(args, 'since', false),
      limit: integerOption(args, 'limit', { min: 1, max: 1000 }),
      before: integerOption(args, 'before', { min: 1, max: Number.MAX_SAFE_INTEGER }),
    })
  },
  human: (page: EventPage) => {
    if (page.events.length === 0) return 'No events.'
    const rows = table([
      ['ID', 'AT', 'KIND', 'PROJECT', 'DETAIL', 'WEBHOOK'],
      ...page.events.map((e) => [String(e.id), e.at, e.kind, e.ref, detail(e), delivery(e)]),
    ])
    return page.next_before === null ? rows : `${rows}\nMore: baseplane events --before ${page.next_before}`
  },
}
