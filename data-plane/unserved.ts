// Paths of the services supabase-js offers that Baseplane does not serve (yet):
// a client calling them gets one sentence naming what is and is not served,
// not a bare "No route" (supabase.from() looks for /rest/v1 first).
import { BaseplaneError } from '../lib/errors.ts'

const NOT_SERVED: ReadonlyArray<readonly [prefix: string, service: string]> = [
  ['/functions/v1', 'Edge Functions (supabase.functions.invoke())'],
]

/** The refusal of a path under a service Baseplane does not serve, or undefined; `served`: the concerns' manifests. */
export function unservedService(path: string, served: readonly { concern: string; prefix: string }[]): BaseplaneError | undefined {
  const found = NOT_SERVED.find(([prefix]) => path === prefix || path.startsWith(`${prefix}/`))
  if (found === undefined) return undefined
  const names = served.map((manifest) => `${manifest.concern} (${manifest.prefix})`)
  const list = names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : names.join('')
  return new BaseplaneError('service_not_offered', `Baseplane does not serve ${found[1]} at ${found[0]}; a project serves ${list}`, 404)
}
