// `baseplane projects rest REF [--schemas public,api] [--max-rows N|default]
// [--pre-request NAME|none] [--tx-end VALUE] [--plans true|false]`: a project's
// data API settings, the exposed schemas, the max rows, the pre-request
// function, how transactions end and whether plans are answered
// (control-plane/rest-settings.ts), and changing them; the result is shown as
// saved, in force from the next request.
import { getRestSettings, maxRowsFromText, setRestSettings, type RestSettingsChange, type RestSettingsView } from '../../control-plane/rest-settings.ts'
import { exposedSchemasFromText } from '../../lib/pg-catalog/exposed-schemas.ts'
import { preRequestFromText } from '../../lib/pg-catalog/pre-request.ts'
import { plansFromText } from '../../lib/rest-plans.ts'
import { TX_END_MEANINGS, TX_END_VALUES, txEndFromText } from '../../lib/rest-tx-end.ts'
import { stringOption, type Command } from '../command.ts'

const USAGE = 'projects rest REF [--schemas public,api] [--max-rows N|default] [--pre-request NAME|none] [--tx-end VALUE] [--plans true|false]'

function show(view: RestSettingsView): string {
  const [first, ...others] = view.schemas
  return [
    `Data API of ${view.ref} (on the next request)`,
    `exposed schemas   ${view.schemas.join(', ')}`,
    `default schema    ${first} (a request without Accept-Profile or Content-Profile)`,
    ...(others.length > 0 ? [`by profile        ${others.join(', ')} (Accept-Profile / Content-Profile, supabase.schema('${others[0]}'))`] : []),
    `max rows          ${view.max_rows === null ? "default (the node's BASEPLANE_REST_MAX_ROWS, 1,000 unless set)" : `${view.max_rows.toLocaleString('en-US')} per response`}`,
    `pre-request       ${view.pre_request === null ? 'none' : `${view.pre_request}() (called as the caller before every request)`}`,
    // Dropped or revoked since it was named: every request fails until it can be called again, so it is said loudly.
    ...(view.pre_request_problem === null ? [] : [`                  CANNOT BE CALLED: ${view.pre_request_problem}; every request fails until it can (or --pre-request none)`]),
    `tx end            ${view.tx_end} (${TX_END_MEANINGS[view.tx_end]})`,
    `plans             ${view.plans ? "true (Accept: application/vnd.pgrst.plan answers the statement's EXPLAIN)" : 'false (Accept: application/vnd.pgrst.plan answers 406)'}`,
  ].join('\n')
}

export const restCommands: Command[] = [
  {
    words: ['projects', 'rest'],
    positionals: ['REF'],
    usage: USAGE,
    summary: "Show (or change) the schemas a project's data API exposes, the most rows it answers, the function it calls before every request, how its transactions end and whether it answers plans",
    options: { schemas: { type: 'string' }, 'max-rows': { type: 'string' }, 'pre-request': { type: 'string' }, 'tx-end': { type: 'string' }, plans: { type: 'string' } },
    optionValues: { schemas: 'LIST', 'max-rows': 'N|default', 'pre-request': 'NAME|none', 'tx-end': 'VALUE', plans: 'true|false' },
    optionHelp: {
      schemas: 'the exposed schemas, separated by commas, the default first (public,api); at most 20, never auth, push, graphql, baseplane or a pg_ schema',
      'max-rows': "the most rows one response carries (PostgREST's db-max-rows), from 1 to 1,000,000; default: the node's BASEPLANE_REST_MAX_ROWS",
      'pre-request': "the function called as the caller before every request's statement (PostgREST's db-pre-request), as schema.function or function (found on the request's search path); none: no function",
      'tx-end': `how a request's transaction ends (PostgREST's db-tx-end): ${TX_END_VALUES.map((value) => `${value}: ${TX_END_MEANINGS[value]}`).join('; ')}`,
      plans: "true: Accept: application/vnd.pgrst.plan (supabase-js .explain()) answers the EXPLAIN of the request's statement (PostgREST's db-plan-enabled); false: it answers 406 (default false, as plans show the project's tables, indexes and policies)",
    },
    notes:
      "A schema not created yet may be listed: it serves nothing until it is. The API roles need USAGE on each schema and privileges on its tables (grant usage on schema api to anon, authenticated, service_role). Max rows caps reads and set-returning functions; count=exact still counts every row. The pre-request function takes no arguments and reads the request's settings (current_setting('request.headers', true)); raising an error refuses the request. It must exist when it is named, and the API roles need USAGE on its schema and EXECUTE on it; one dropped or revoked later is shown as one that cannot be called, as every request fails while it is. A transaction a request may end (--tx-end commit-allow-override) is rolled back after its statement ran and its answer was made, deferred constraints checked first; a plan (--plans true) runs as the caller, under its policies, and its transaction is always rolled back, so options=analyze never keeps a write. Applies from the next request.",
    async run(context, args) {
      const ref = args.positionals[0]!
      const schemas = stringOption(args, 'schemas', false)
      const maxRows = stringOption(args, 'max-rows', false)
      const preRequest = stringOption(args, 'pre-request', false)
      const txEnd = stringOption(args, 'tx-end', false)
      const plans = stringOption(args, 'plans', false)
      // Checked before the platform is opened: a refused value changes nothing.
      const change: RestSettingsChange = {}
      if (schemas !== undefined) change.schemas = exposedSchemasFromText(schemas, 'schemas', '--schemas')
      if (maxRows !== undefined) change.max_rows = maxRowsFromText(maxRows, 'max_rows', '--max-rows')
      if (preRequest !== undefined) change.pre_request = preRequestFromText(preRequest, 'pre_request', '--pre-request')
      if (txEnd !== undefined) change.tx_end = txEndFromText(txEnd, 'tx_end', '--tx-end')
      if (plans !== undefined) change.plans = plansFromText(plans, 'plans', '--plans')
      const controlPlane = await context.controlPlane()
      return Object.keys(change).length === 0 ? getRestSettings(controlPlane, ref) : setRestSettings(controlPlane, ref, change)
    },
    human: show,
  },
]
