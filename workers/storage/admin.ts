// Storage's statements for the operator (the dashboard's Storage tab, the
// CLI's `storage ...`, the admin API), each on the connection the control
// plane hands in: reads on the server's admin role (they read
// baseplane_storage.blobs, the platform's own table, and run no owner code:
// storage.objects and storage.buckets are plain tables, and the admin role is
// not subject to their policies); writes (a bucket made or changed, an object
// removed) as service_role, switched to on the API's login role, since the
// owner's triggers on storage.buckets and storage.objects run with them.
// Exported through face.ts only.
import type pg from 'pg'
import type { BlobStore } from './blob-store.ts'
import { dropBlobs } from './blobs.ts'
import type { BucketSettings } from './bucket-settings.ts'

/** A bucket, its settings, and what it holds: its objects and their bytes (the blobs they name). */
export interface BucketSummary {
  id: string
  name: string
  public: boolean
  /** Bytes; null: the plan's largest upload. */
  file_size_limit: number | null
  /** null: any type. */
  allowed_mime_types: string[] | null
  created_at: string
  updated_at: string
  objects: number
  bytes: number
}

/** One entry of a folder's listing: a folder (a prefix with objects below it), or a file. */
export interface FolderEntry {
  name: string
  /** `folder`: the name is the folder's, without its `/`. */
  kind: 'folder' | 'file'
  /** The object's whole key (folders: the prefix, ending with `/`). */
  key: string
  id: string | null
  size: number | null
  mimetype: string | null
  updated_at: string | null
}

export interface StorageFigures {
  /** What the usage and the quotas count: every blob the platform recorded (storedBytes). */
  bytes: number
  objects: number
  buckets: number
}

/** A policy on storage.objects or storage.buckets, as pg_policies shows it. */
export interface StoragePolicy {
  table: string
  name: string
  command: string
  roles: string[]
  permissive: boolean
  using: string | null
  check: string | null
}

interface BucketRow {
  id: string
  name: string
  public: boolean
  file_size_limit: string | null
  allowed_mime_types: string[] | null
  created_at: Date
  updated_at: Date
  objects: string
  bytes: string
}

function summary(row: BucketRow): BucketSummary {
  return {
    id: row.id,
    name: row.name,
    public: row.public,
    file_size_limit: row.file_size_limit === null ? null : Number(row.file_size_limit),
    allowed_mime_types: row.allowed_mime_types,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    objects: Number(row.objects),
    bytes: Number(row.bytes),
  }
}

const BUCKETS = `with live as (
    select o.bucket_id, count(*) as objects, coalesce(sum(z.size), 0) as bytes
      from storage.objects o left join baseplane_storage.blobs z on z.version::text = o.version
     group by o.bucket_id)
  select b.id, b.name, b.public, b.file_size_limit::text, b.allowed_mime_types, b.created_at, b.updated_at,
         coalesce(l.objects, 0)::text as objects, coalesce(l.bytes, 0)::text as bytes
    from storage.buckets b left join live l on l.bucket_id = b.id`

/** Every bucket by name, with its objects and bytes (on the admin role: reads baseplane_storage.blobs). */
export async function readBuckets(client: pg.ClientBase): Promise<BucketSummary[]> {
  const { rows } = await client.query<BucketRow>(`${BUCKETS} order by b.name collate "C", b.id`)
  return rows.map(summary)
}

/** One bucket as readBuckets() shows it, or undefined. */
export async function readBucket(client: pg.ClientBase, id: string): Promise<BucketSummary | undefined> {
  const { rows } = await client.query<BucketRow>(`${BUCKETS} where b.id = $1`, [id])
  return rows[0] && summary(rows[0])
}

/** A folder as a prefix: `a/b` and `a/b/` are both the folder a/b; '' the bucket's top. */
export function folderPrefix(prefix: string): string {
  const text = prefix.replace(/^\/+/, '')
  return text === '' || text.endsWith('/') ? text : `${text}/`
}

/**
 * One folder level of `bucket` under `prefix`, as storage-js list() answers it:
 * the folders first, then the files, each by name; `limit` + 1 rows are read
 * so the caller knows whether a page follows.
 */
export async function readFolder(client: pg.ClientBase, bucket: string, prefix: string, limit: number, offset: number): Promise<FolderEntry[]> {
  const { rows } = await client.query<{ name: string; id: string | null; size: string | null; mimetype: string | null; updated_at: Date | null }>(
    `with under as (
       select o.id, o.updated_at, o.metadata, substr(o.name, length($2) + 1) as rest from storage.objects o
        where o.bucket_id = $1 and o.name collate "C" >= $2 and starts_with(o.name, $2)
     ), items as (
       select split_part(rest, '/', 1) as name, null::uuid as id, null::text as size, null::text as mimetype, null::timestamptz as updated_at
         from under where position('/' in rest) > 0 group by split_part(rest, '/', 1)
       union all
       select rest, id, metadata->>'size', metadata->>'mimetype', updated_at from under where position('/' in rest) = 0
     )
     select * from items order by (id is not null), name collate "C" limit $3 offset $4`,
    [bucket, prefix, limit, offset],
  )
  return rows.map((row) => ({
    name: row.name,
    kind: row.id === null ? 'folder' : 'file',
    key: row.id === null ? `${prefix}${row.name}/` : `${prefix}${row.name}`,
    id: row.id,
    size: row.size === null || !/^\d+$/.test(row.size) ? null : Number(row.size),
    mimetype: row.mimetype,
    updated_at: row.updated_at?.toISOString() ?? null,
  }))
}

/** The project's stored bytes (as storedBytes() counts them), objects and buckets, in one statement. */
export async function readFigures(client: pg.ClientBase): Promise<StorageFigures> {
  const { rows } = await client.query<{ bytes: string; objects: string; buckets: string }>(
    `select (select coalesce(sum(size), 0) from baseplane_storage.blobs)::text as bytes,
            (select count(*) from storage.objects)::text as objects,
            (select count(*) from storage.buckets)::text as buckets`,
  )
  return { bytes: Number(rows[0]!.bytes), objects: Number(rows[0]!.objects), buckets: Number(rows[0]!.buckets) }
}

/** The policies on storage.objects and storage.buckets, which decide what the API lets each caller do. */
export async function readPolicies(client: pg.ClientBase): Promise<StoragePolicy[]> {
  const { rows } = await client.query<{ tablename: string; policyname: string; cmd: string; roles: string[]; permissive: string; qual: string | null; with_check: string | null }>(
    `select tablename::text, policyname::text, cmd::text, roles::text[] as roles, permissive::text, qual, with_check
       from pg_policies where schemaname = 'storage' and tablename in ('objects', 'buckets') order by tablename, policyname`,
  )
  return rows.map((row) => ({
    table: `storage.${row.tablename}`,
    name: row.policyname,
    command: row.cmd,
    roles: row.roles,
    permissive: row.permissive === 'PERMISSIVE',
    using: row.qual,
    check: row.with_check,
  }))
}

/** On a service_role connection: a new bucket (false when the id is taken). */
export async function insertBucket(client: pg.ClientBase, id: string, settings: BucketSettings): Promise<boolean> {
  const { rowCount } = await client.query(
    `insert into storage.buckets (id, name, public, file_size_limit, allowed_mime_types) values ($1, $1, $2, $3, $4) on conflict do nothing`,
    [id, settings.isPublic ?? false, settings.limit ?? null, settings.mimeTypes ?? null],
  )
  return (rowCount ?? 0) > 0
}

/** On a service_role connection: the settings given (undefined ones kept), as PUT /bucket/:id sets them; false when there is no such bucket. */
export async function updateBucketRow(client: pg.ClientBase, id: string, settings: BucketSettings): Promise<boolean> {
  const { rowCount } = await client.query(
    `update storage.buckets set
       public = coalesce($2, public),
       file_size_limit = case when $3 then $4 else file_size_limit end,
       allowed_mime_types = case when $5 then $6 else allowed_mime_types end,
       updated_at = now()
     where id = $1`,
    [id, settings.isPublic ?? null, settings.limit !== undefined, settings.limit ?? null, settings.mimeTypes !== undefined, settings.mimeTypes ?? null],
  )
  return (rowCount ?? 0) > 0
}

/** On a service_role connection: removes one object's row; answers the version of its bytes (null: none), or undefined when there was no such object. */
export async function deleteObjectRow(client: pg.ClientBase, bucket: string, key: string): Promise<{ version: string | null } | undefined> {
  const { rows } = await client.query<{ version: string | null }>('delete from storage.objects where bucket_id = $1 and name = $2 returning version', [bucket, key])
  return rows[0]
}

/**
 * After deleteObjectRow() committed: the bytes no row names any more, and
 * their records (`asPlatform`: the admin role's connection). Best effort, as
 * the API's removal is: what fails is left to Storage's collector.
 */
export async function dropObjectBytes(
  asPlatform: <T>(work: (client: pg.ClientBase) => Promise<T>) => Promise<T>,
  store: BlobStore,
  ref: string,
  versions: readonly string[],
): Promise<void> {
  await dropBlobs({ asPlatform }, store, ref, versions)
}
