// The platform's record of the bytes it wrote (sql/project/0050
// baseplane_storage.blobs), kept so that an object's row and its bytes never
// disagree after a crash at any moment: a blob is recorded before its bytes are
// written (under a key of a fresh uuid, which nothing reads until a row names
// it), the row that names it is written after, and a blob no row names once its
// upload's time has passed is garbage, removed with its bytes (collect()).
import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import type { BlobStore } from './blob-store.ts'
import type { Client, StorageDatabase } from './database.ts'

/** The longest an upload (one request, or a resumable one between its parts) may take before its blob is collectable. */
export const UPLOAD_WINDOW_SECONDS = 24 * 60 * 60

export function blobKey(ref: string, version: string): string {
  return `${ref}/${version}`
}

/** A new blob's version, recorded as pending before any byte is written. */
export async function reserveBlob(database: StorageDatabase, bucket: string, name: string, windowSeconds = UPLOAD_WINDOW_SECONDS): Promise<string> {
  const version = randomUUID()
  await database.asPlatform((client) =>
    client.query(`insert into baseplane_storage.blobs (version, bucket_id, name, collect_after) values ($1, $2, $3, now() + make_interval(secs => $4))`, [
      version,
      bucket,
      name,
      windowSeconds,
    ]),
  )
  return version
}

/** The blob's bytes are written: its size counts in the project's storage from now on. */
export async function blobWritten(database: StorageDatabase, version: string, size: number): Promise<void> {
  await database.asPlatform((client) => client.query('update baseplane_storage.blobs set size = $2 where version = $1', [version, size]))
}

/** What runs the platform's own statements on a project's database: Storage's pools (StorageDatabase), or the control plane's connection. */
export interface PlatformStatements {
  asPlatform<T>(work: (client: pg.ClientBase) => Promise<T>): Promise<T>
}

/**
 * Removes blobs a committed change no longer names (an overwritten or deleted
 * object's), bytes first, then the records. Best effort: what fails here is
 * left to collect().
 */
export async function dropBlobs(database: PlatformStatements, store: BlobStore, ref: string, versions: readonly string[]): Promise<void> {
  const uuids = versions.filter((version) => UUID.test(version))
  if (uuids.length === 0) return
  try {
    // Only blobs no row names any more: an owner's SQL may have pointed a row at a version.
    const unnamed = await database.asPlatform(async (client) => {
      const { rows } = await client.query<{ version: string }>(
        `select b.version::text from baseplane_storage.blobs b
          where b.version = any($1::uuid[]) and not exists (select 1 from storage.objects o where o.version = b.version::text)`,
        [uuids],
      )
      return rows.map((row) => row.version)
    })
    if (unnamed.length === 0) return
    await store.delete(unnamed.map((version) => blobKey(ref, version)))
    await dropRenderings(store, ref, unnamed)
    await database.asPlatform((client) => client.query('delete from baseplane_storage.blobs where version = any($1::uuid[])', [unnamed]))
  } catch {
    // collect() removes them later.
  }
}

/** A removed version's renderings (workers/storage/render.ts keeps them under `<ref>/render/<version>/`). */
async function dropRenderings(store: BlobStore, ref: string, versions: readonly string[]): Promise<void> {
  for (const version of versions) await store.deletePrefix(`${ref}/render/${version}/`)
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export { UUID as VERSION_PATTERN }

/**
 * Removes the project's garbage: blobs past their upload window that no row
 * names (an upload that died before its row, a row deleted by the owner's own
 * SQL, a removal whose bytes could not be deleted then). Bytes first, so a
 * record outlives its bytes, never the reverse. Answers how many it removed.
 */
export async function collect(database: StorageDatabase, store: BlobStore, ref: string, batch = 500): Promise<number> {
  const garbage = await database.asPlatform(async (client) => {
    const { rows } = await client.query<{ version: string }>(
      `select b.version::text from baseplane_storage.blobs b
        where b.collect_after < now() and not exists (select 1 from storage.objects o where o.version = b.version::text)
        order by b.collect_after limit $1`,
      [batch],
    )
    return rows.map((row) => row.version)
  })
  if (garbage.length === 0) return 0
  await store.delete(garbage.map((version) => blobKey(ref, version)))
  await dropRenderings(store, ref, garbage)
  await database.asPlatform((client) => client.query('delete from baseplane_storage.blobs where version = any($1::uuid[])', [garbage]))
  return garbage.length
}

/** The project's stored bytes, as the usage and the quotas count them: every blob recorded (on a platform connection, or the server's admin's). */
export async function storedBytesOf(client: Pick<Client, 'query'>): Promise<number> {
  const { rows } = await client.query<{ bytes: string }>(STORED_BYTES)
  return Number(rows[0]!.bytes)
}

export const STORED_BYTES = 'select coalesce(sum(size), 0)::text as bytes from baseplane_storage.blobs'

export async function storedBytes(database: StorageDatabase): Promise<number> {
  return database.asPlatform((client) => storedBytesOf(client))
}
