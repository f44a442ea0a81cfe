// `baseplane projects rest REF [--schemas public,api] [--max-rows N|default]`:
// a project's data API settings, the exposed schemas and the max rows
// (control-plane/rest-settings.ts), and changing them; the result is shown as
// saved, in force from the next request.
import { getRestSettings, maxRowsFromText, setRestSettings, type RestSettingsChange, type RestSettingsView } from '../../control-plane/rest-settings.ts'
import { exposedSchemasFromText } from '../../lib/pg-catalog/exposed-schemas.ts'
import { stringOption, type Command } from '../command.ts'

const USAGE = 'projects rest REF [--schemas public,api] [--max-rows N|default]'

function show(view: RestSettingsView): string {
  const [first, ...others] = view.schemas
  return [
    `Data API of ${view.ref} (on the next request)`,
    `exposed schemas   ${view.schemas.join(', ')}`,
    `default schema    ${first} (a request without Accept-Profile or Content-Profile)`,
    ...(others.length > 0 ? [`by profile        ${others.join(', ')} (Accept-Profile / Content-Profile, supabase.schema('${others[0]}'))`] : []),
    `max rows          ${view.max_rows === null ? "default (the node's BASEPLANE_REST_MAX_ROWS, 1,000 unless set)" : `${view.max_rows.toLocaleString('en-US')} per response`}`,
  ].join('\n')
}

export const restCommands: Command[] = [
  {
    words: ['projects', 'rest'],
    positionals: ['REF'],
    usage: USAGE,
    summary: "Show (or change) the schemas a project's data API exposes and the most rows it answers",
    options: { schemas: { type: 'string' }, 'max-rows': { type: 'string' } },
    optionValues: { schemas: 'LIST', 'max-rows': 'N|default' },
    optionHelp: {
      schemas: 'the exposed schemas, separated by commas, the default first (public,api); at most 20, never auth, push, graphql, baseplane or a pg_ schema',
      'max-rows': "the most rows one response carries (PostgREST's db-max-rows), from 1 to 1,000,000; default: the node's BASEPLANE_REST_MAX_ROWS",
    },
    notes:
      'A schema not created yet may be listed: it serves nothing until it is. The API roles need USAGE on each schema and privileges on its tables (grant usage on schema api to anon, authenticated, service_role). Max rows caps reads and set-returning functions; count=exact still counts every row. Applies from the next request.',
    async run(context, args) {
      const ref = args.positionals[0]!
      const schemas = stringOption(args, 'schemas', false)
      const maxRows = stringOption(args, 'max-rows', false)
      // Checked before the platform is opened: a refused value changes nothing.
      const change: RestSettingsChange = {}
      if (schemas !== undefined) change.schemas = exposedSchemasFromText(schemas, 'schemas', '--schemas')
      if (maxRows !== undefined) change.max_rows = maxRowsFromText(maxRows, 'max_rows', '--max-rows')
      const controlPlane = await context.controlPlane()
      return Object.keys(change).length === 0 ? getRestSettings(controlPlane, ref) : setRestSettings(controlPlane, ref, change)
    },
    human: show,
  },
]
