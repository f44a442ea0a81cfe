// The schema's `allowlist` and persisted queries (SPEC 2.4). Which document a
// request runs:
//
// - `extensions.persistedQuery.sha256Hash` alone (no `query`), from any role:
//   the allowlist table's document of that hash (Apollo's protocol; no
//   allowlist: PersistedQueryNotSupported, so Apollo Client sends the text
//   from then on; an unknown hash: PersistedQueryNotFound).
// - a `query` text from a role the allowlist holds (anon and authenticated
//   unless it lists others): only when the table has a row with the text's
//   SHA-256 and that very text. A hash sent with the text must be the text's.
//
// The table is read as the caller, inside the request's transaction, so the
// roles it holds need `select` on it (and its policies apply). Nothing is
// cached: a row added or removed decides the next request.
import crypto from 'node:crypto'
import type pg from 'pg'
import type { Allowlist } from './directives.ts'
import { graphqlErrors } from './errors.ts'
import { qualified } from './sql.ts'

export function sha256Hex(text: string): string {
  return crypto.createHash('sha256').update(text, 'utf8').digest('hex')
}

/** The hash of `extensions.persistedQuery.sha256Hash`, lower-cased; undefined when the request sends none. */
export function persistedHashOf(extensions: unknown): string | undefined {
  if (typeof extensions !== 'object' || extensions === null) return undefined
  const persisted = (extensions as Record<string, unknown>).persistedQuery
  if (typeof persisted !== 'object' || persisted === null) return undefined
  const hash = (persisted as Record<string, unknown>).sha256Hash
  return typeof hash === 'string' ? hash.toLowerCase() : undefined
}

/** Whether `role` may run only stored documents. */
export function restricts(allowlist: Allowlist | undefined, role: string): boolean {
  return allowlist !== undefined && allowlist.roles.includes(role)
}

/**
 * The document the request runs, or a refusal (thrown). `query` is the text
 * sent (undefined when none), `hash` the persisted-query hash sent.
 */
export async function allowedDocument(
  client: pg.ClientBase,
  allowlist: Allowlist | undefined,
  role: string,
  query: string | undefined,
  hash: string | undefined,
): Promise<string> {
  if (query === undefined) {
    if (allowlist === undefined) throw graphqlErrors.persistedQueryNotSupported()
    const { rows } = await client.query<{ document: string }>(
      `select document from ${qualified(allowlist.schema, allowlist.table)} where hash = $1 limit 1`,
      [hash],
    )
    const stored = rows[0]?.document
    if (typeof stored !== 'string') throw graphqlErrors.persistedQueryNotFound()
    // A row whose hash is not its document's would let a role run what the list does not say.
    if (sha256Hex(stored) !== hash) throw graphqlErrors.storedDocumentHash(hash!)
    return stored
  }
  const own = sha256Hex(query)
  if (hash !== undefined && hash !== own) throw graphqlErrors.persistedQueryHashMismatch()
  if (!restricts(allowlist, role)) return query
  const { rows } = await client.query<{ ok: boolean }>(
    `select exists (select from ${qualified(allowlist!.schema, allowlist!.table)} where hash = $1 and document = $2) as ok`,
    [own, query],
  )
  if (rows[0]?.ok !== true) throw graphqlErrors.notAllowlisted(role, own)
  return query
}
