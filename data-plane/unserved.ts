// Paths of the services supabase-js offers that Baseplane does not serve (yet):
// a client calling them gets one sentence naming what is and is not served,
// not a bare "No route" (supabase.from() looks for /rest/v1 first).
import { BaseplaneError } from '../lib/errors.ts'

const NOT_SERVED: ReadonlyArray<readonly [prefix: string, service: string]> = [
  ['/rest/v1', 'the Data API (PostgREST: supabase.from() and .rpc())'],
  ['/storage/v1', 'Storage (supabase.storage)'],
  ['/realtime/v1', 'Realtime (supabase.channel())'],
  ['/functions/v1', 'Edge Functions (supabase.functions.invoke())'],
]

/** The refusal of a path under a service Baseplane does not serve, or undefined. */
export function unservedService(path: string): BaseplaneError | undefined {
  const found = NOT_SERVED.find(([prefix]) => path === prefix || path.startsWith(`${prefix}/`))
  if (found === undefined) return undefined
  return new BaseplaneError(
    'service_not_offered',
    `Baseplane does not serve ${found[1]} at ${found[0]}; a project serves Auth (/auth/v1), GraphQL (/graphql/v1) and Push (/push/v1)`,
    404,
  )
}
