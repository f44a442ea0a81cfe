// `baseplane projects rest REF [--schemas public,api]`: a project's data API
// settings, the exposed schemas (control-plane/rest-settings.ts), and changing
// them; the result is shown as saved, in force from the next request.
import { getRestSettings, setRestSettings, type RestSettingsView } from '../../control-plane/rest-settings.ts'
import { exposedSchemasFromText } from '../../lib/pg-catalog/exposed-schemas.ts'
import { stringOption, type Command } from '../command.ts'

const USAGE = 'projects rest REF [--schemas public,api]'

function show(view: RestSettingsView): string {
  const [first, ...others] = view.schemas
  return [
    `Data API of ${view.ref} (on the next request)`,
    `exposed schemas   ${view.schemas.join(', ')}`,
    `default schema    ${first} (a request without Accept-Profile or Content-Profile)`,
    ...(others.length > 0 ? [`by profile        ${others.join(', ')} (Accept-Profile / Content-Profile, supabase.schema('${others[0]}'))`] : []),
  ].join('\n')
}

export const restCommands: Command[] = [
  {
    words: ['projects', 'rest'],
    positionals: ['REF'],
    usage: USAGE,
    summary: "Show (or change) the schemas a project's data API exposes",
    options: { schemas: { type: 'string' } },
    optionValues: { schemas: 'LIST' },
    optionHelp: {
      schemas: 'the exposed schemas, separated by commas, the default first (public,api); at most 20, never auth, push, graphql, baseplane or a pg_ schema',
    },
    notes:
      "A schema not created yet may be listed: it serves nothing until it is. The API roles need USAGE on each schema and privileges on its tables (grant usage on schema api to anon, authenticated, service_role). Applies from the next request.",
    async run(context, args) {
      const ref = args.positionals[0]!
      const raw = stringOption(args, 'schemas', false)
      // Checked before the platform is opened: a refused list changes nothing.
      const schemas = raw === undefined ? undefined : exposedSchemasFromText(raw, 'schemas', '--schemas')
      const controlPlane = await context.controlPlane()
      return schemas === undefined ? getRestSettings(controlPlane, ref) : setRestSettings(controlPlane, ref, { schemas })
    },
    human: show,
  },
]
