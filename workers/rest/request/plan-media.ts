// The plan media (PostgREST's `application/vnd.pgrst.plan`, shared/reference/
// postgrest.md section 2): `Accept: application/vnd.pgrst.plan[+json|+text];
// for="<media>"; options=analyze|verbose|settings|buffers|wal` asks for the
// EXPLAIN of the statement the request would run for `for`'s media
// (`application/json` when absent), in JSON or text (text when neither
// suffix is given). Understood only where the project answers plans
// (RestProjectContext.plans); elsewhere the type is not one this API
// produces, and an Accept without another is 406 PGRST107 as before.
import type { Media } from './request.ts'

/** EXPLAIN's options a plan may ask for, in the order PostgREST writes them back. */
export const PLAN_OPTIONS = ['analyze', 'verbose', 'settings', 'buffers', 'wal'] as const

export type PlanOption = (typeof PLAN_OPTIONS)[number]

export interface PlanMedia {
  format: 'json' | 'text'
  /** The media the planned statement would answer in. */
  for: Media
  options: PlanOption[]
}

const FORMATS: Record<string, PlanMedia['format']> = {
  'application/vnd.pgrst.plan': 'text',
  'application/vnd.pgrst.plan+text': 'text',
  'application/vnd.pgrst.plan+json': 'json',
}

/** The media `for=` may name (PostgREST's own, as parseAccept reads them). */
const FOR_MEDIA: Record<string, Media> = {
  'application/json': 'json',
  'application/*': 'json',
  '*/*': 'json',
  'application/vnd.pgrst.array+json': 'json',
  'application/vnd.pgrst.array': 'json',
  'application/vnd.pgrst.object+json': 'object',
  'application/vnd.pgrst.object': 'object',
  'text/csv': 'csv',
}

/** The mime each media is named by in the plan's Content-Type (PostgREST's toMime). */
const MIME: Record<Media, string> = { json: 'application/json', object: 'application/vnd.pgrst.object+json', csv: 'text/csv' }

/**
 * One item of `Accept` (its type and its parameters, lower-cased and
 * trimmed) as a plan; undefined when it is not a plan type, or names a
 * `for` this API does not produce. Unknown options are ignored, as PostgREST ignores them.
 */
export function planMediaOf(type: string, params: readonly string[]): PlanMedia | undefined {
  const format = FORMATS[type]
  if (format === undefined) return undefined
  const value = (name: string) => params.find((p) => p.startsWith(`${name}=`))?.slice(name.length + 1)
  const named = value('for')?.replace(/^"|"$/g, '').trim()
  const media = named === undefined || named === '' ? 'json' : FOR_MEDIA[named]
  if (media === undefined) return undefined
  const asked = new Set((value('options') ?? '').split('|').map((o) => o.trim()))
  return { format, for: media, options: PLAN_OPTIONS.filter((option) => asked.has(option)) }
}

/** The answer's Content-Type, as PostgREST writes it: the format, `for` always, the options given. */
export function planContentType(plan: PlanMedia): string {
  const options = plan.options.length > 0 ? `; options=${plan.options.join('|')}` : ''
  return `application/vnd.pgrst.plan+${plan.format}; for="${MIME[plan.for]}"${options}; charset=utf-8`
}
