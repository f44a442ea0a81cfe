// What bucket names and object keys may be, as Supabase Storage checks them
// (storage-js mirrors the bucket rule: 1-100 characters, letters, digits, `_`
// and `! - . * ' ( ) space & $ @ = ; : + , ?`). Keys take `/` besides, and
// never a segment that climbs (`.`, `..`), an empty segment, a backslash or a
// control character (NUL among them). Bytes never live under these names
// (blob-store.ts keys are the platform's uuids): the check is the API's
// contract, not what keeps another project's bytes out of reach.
import { storageErrors } from './errors.ts'

const BUCKET_NAME = /^[\w!.*'() &$@=;:+,?-]+$/
// Letters of any script are allowed in keys (Supabase accepts Unicode keys); what is refused is listed above.
const KEY_FORBIDDEN = /[\u0000-\u001f\u007f\\]/

export function checkBucketName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > 100 || name.trim() !== name || !BUCKET_NAME.test(name)) {
    throw storageErrors.invalidBucketName(String(name))
  }
  return name
}

/** A key as it arrives in a path (already percent-decoded) or a body; the longest Supabase allows is 1,024 bytes. */
export function checkKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0 || Buffer.byteLength(key) > 1024 || KEY_FORBIDDEN.test(key)) throw storageErrors.invalidKey(String(key))
  const segments = key.split('/')
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) throw storageErrors.invalidKey(key)
  return key
}

/** A path parameter percent-decoded once; a malformed escape or an encoded slash is refused rather than read two ways. */
export function decodedParam(raw: string, what: 'bucket' | 'key'): string {
  let value: string
  try {
    value = what === 'key' ? raw.split('/').map((segment) => decodeSegment(segment)).join('/') : decodeSegment(raw)
  } catch {
    throw what === 'key' ? storageErrors.invalidKey(raw) : storageErrors.invalidBucketName(raw)
  }
  return what === 'key' ? checkKey(value) : checkBucketName(value)
}

function decodeSegment(segment: string): string {
  const decoded = decodeURIComponent(segment)
  // `%2F` inside a segment would make a key whose folders differ from the path's: refused.
  if (decoded.includes('/')) throw new URIError('an encoded slash')
  return decoded
}

/** Whether `type` is allowed by a bucket's list (`image/*` covers `image/png`); no list allows any. */
export function mimeAllowed(type: string, allowed: readonly string[] | null): boolean {
  if (allowed === null || allowed.length === 0) return true
  const [major] = type.split('/')
  return allowed.some((pattern) => {
    const wanted = pattern.trim().toLowerCase()
    if (wanted === '*/*' || wanted === '*') return true
    if (wanted.endsWith('/*')) return wanted.slice(0, -2) === major
    return wanted === type
  })
}
