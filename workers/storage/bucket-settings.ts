// A bucket's settings (public, file_size_limit, allowed_mime_types) as the
// API takes them and checks them against the plan (lib/plans.ts
// STORAGE_LIMITS): the bucket routes (buckets.ts) and the operator's paths
// (face.ts) check them here alike.
import { STORAGE_LIMITS, type Plan } from '../../lib/plans.ts'
import { storageErrors } from './errors.ts'

/** `fileSizeLimit` as storage-js sends it: bytes, or a string with a unit (`"5MB"`, `"1 GB"`); null lifts the bucket's own limit. */
export function sizeLimitOf(value: unknown): number | null | undefined {
  if (value === undefined) return undefined
  if (value === null) return null
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value
  if (typeof value === 'string') {
    const found = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|tb)?\s*$/i.exec(value)
    if (found) {
      const units: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3, tb: 1024 ** 4 }
      return Math.floor(Number(found[1]) * units[(found[2] ?? 'b').toLowerCase()]!)
    }
  }
  throw storageErrors.invalidRequest('file_size_limit must be a number of bytes or a size such as "5MB"')
}

export function mimeTypesOf(value: unknown): string[] | null | undefined {
  if (value === undefined) return undefined
  if (value === null) return null
  if (Array.isArray(value) && value.every((item) => typeof item === 'string' && /^[\w.+*-]+\/[\w.+*-]+$/.test(item))) return value as string[]
  throw storageErrors.invalidRequest('allowed_mime_types must be a list of media types such as "image/png" or "image/*"')
}

/** A bucket's settings as a create or an update gives them (undefined: not given), checked against the plan's largest upload. */
export interface BucketSettings {
  limit: number | null | undefined
  mimeTypes: string[] | null | undefined
  isPublic: boolean | undefined
}

/**
 * The settings a create or an update sets (snake_case as the API documents
 * them, camelCase as some clients send them); the operator's dashboard, CLI and
 * admin API check theirs here too (face.ts).
 */
export function bucketSettingsOf(plan: Plan, body: Record<string, unknown>): BucketSettings {
  // `in`, not `??`: a null lifts the bucket's limit (or its type list) whichever spelling carries it.
  const limit = sizeLimitOf('file_size_limit' in body ? body.file_size_limit : body.fileSizeLimit)
  const largest = STORAGE_LIMITS[plan].fileSizeBytes
  if (typeof limit === 'number' && limit > largest) {
    throw storageErrors.invalidRequest(`file_size_limit exceeds the plan's largest upload (${largest} bytes)`)
  }
  const isPublic = body.public
  if (isPublic !== undefined && typeof isPublic !== 'boolean') throw storageErrors.invalidRequest('public must be true or false')
  return { limit, mimeTypes: mimeTypesOf('allowed_mime_types' in body ? body.allowed_mime_types : body.allowedMimeTypes), isPublic }
}

