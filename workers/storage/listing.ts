// Listing a bucket as the caller (its select policies decide what is seen):
// `list` (storage-js list(): one folder level under a prefix, folders and files
// together, search, sort, limit and offset) and `list-v2` (listV2(): keys from
// a prefix in name order with a cursor, folded at `/` when with_delimiter).
import type { ServiceResponse } from '../../lib/service.ts'
import { callerOf, json, jsonBody, type StorageCall } from './call.ts'
import { storageErrors } from './errors.ts'
import { decodedParam } from './names.ts'
import { folderPrefix } from './admin.ts'
import { bucketSettings } from './objects.ts'

const SORTABLE = new Set(['name', 'created_at', 'updated_at', 'last_accessed_at'])

function limitOf(value: unknown, fallback: number, max: number): number {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw storageErrors.invalidRequest('limit must be a whole number of at least 1')
  return Math.min(value, max)
}

function sortOf(value: unknown): { column: string; order: 'asc' | 'desc' } {
  const sort = (value ?? {}) as { column?: unknown; order?: unknown }
  const column = sort.column ?? 'name'
  const order = String(sort.order ?? 'asc').toLowerCase()
  if (typeof column !== 'string' || !SORTABLE.has(column)) throw storageErrors.invalidRequest(`sortBy.column must be one of ${[...SORTABLE].join(', ')}`)
  if (order !== 'asc' && order !== 'desc') throw storageErrors.invalidRequest('sortBy.order must be asc or desc')
  return { column, order }
}

/** The body's `prefix` as a folder (admin.ts folderPrefix: `a/b` and `a/b/` both list what is inside a/b). */
function prefixOf(value: unknown): string {
  if (value !== undefined && value !== null && typeof value !== 'string') throw storageErrors.invalidRequest('prefix must be a string')
  if ((value ?? '').includes('\u0000')) throw storageErrors.invalidRequest('prefix must not hold a NUL')
  return folderPrefix(value ?? '')
}

interface ListedRow {
  name: string
  id: string | null
  updated_at: Date | null
  created_at: Date | null
  last_accessed_at: Date | null
  metadata: Record<string, unknown> | null
}

export async function list(call: StorageCall): Promise<ServiceResponse> {
  const bucket = decodedParam(call.params.bucket!, 'bucket')
  const body = jsonBody(call)
  const prefix = prefixOf(body.prefix)
  const limit = limitOf(body.limit, 100, 10000)
  const offset = body.offset === undefined ? 0 : body.offset
  if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0) throw storageErrors.invalidRequest('offset must be a whole number')
  const search = body.search === undefined || body.search === null ? '' : String(body.search)
  const { column, order } = sortOf(body.sortBy)
  await bucketSettings(call, bucket)
  const rows = await call.database.asCaller(callerOf(call), async (client) => {
    // One level below the prefix: a name with a further `/` is a folder (listed once, with no id), the rest are files.
    const { rows } = await client.query<ListedRow>(
      `with under as (
         select o.*, substr(o.name, length($2) + 1) as rest from storage.objects o
          where o.bucket_id = $1 and o.name collate "C" >= $2 and starts_with(o.name, $2)
       ), items as (
         select split_part(rest, '/', 1) as name, null::uuid as id, null::timestamptz as updated_at, null::timestamptz as created_at,
                null::timestamptz as last_accessed_at, null::jsonb as metadata
           from under where position('/' in rest) > 0 group by split_part(rest, '/', 1)
         union all
         select rest, id, updated_at, created_at, last_accessed_at, metadata from under where position('/' in rest) = 0
       )
       select * from items where $3 = '' or name ilike replace(replace(replace($3, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%'
        order by (id is not null), ${column} ${order} nulls first, name collate "C" ${order} limit $4 offset $5`,
      [bucket, prefix, search, limit, offset],
    )
    return rows
  })
  return json(
    200,
    rows.map((row) => ({
      name: row.name,
      id: row.id,
      updated_at: row.updated_at?.toISOString() ?? null,
      created_at: row.created_at?.toISOString() ?? null,
      last_accessed_at: row.last_accessed_at?.toISOString() ?? null,
      metadata: row.metadata,
    })),
  )
}

export async function listV2(call: StorageCall): Promise<ServiceResponse> {
  const bucket = decodedParam(call.params.bucket!, 'bucket')
  const body = jsonBody(call)
  if (body.prefix !== undefined && typeof body.prefix !== 'string') throw storageErrors.invalidRequest('prefix must be a string')
  const prefix = ((body.prefix as string | undefined) ?? '').replace(/^\/+/, '')
  const limit = limitOf(body.limit, 1000, 1000)
  const delimited = body.with_delimiter === true
  let after = ''
  if (body.cursor !== undefined && body.cursor !== null && body.cursor !== '') {
    if (typeof body.cursor !== 'string') throw storageErrors.invalidRequest('cursor must be a string')
    after = Buffer.from(body.cursor, 'base64url').toString('utf8')
  }
  await bucketSettings(call, bucket)
  // Name order only: the cursor is the last key (or folder) answered, so a page never repeats nor skips one.
  const rows = await call.database.asCaller(callerOf(call), async (client) => {
    const { rows } = await client.query<ListedRow & { folder: boolean }>(
      `with under as (
         select o.*, substr(o.name, length($2) + 1) as rest from storage.objects o
          where o.bucket_id = $1 and starts_with(o.name, $2) and o.name collate "C" > $3
       ), items as (
         select $2 || split_part(rest, '/', 1) || '/' as name, true as folder, null::uuid as id, null::timestamptz as updated_at,
                null::timestamptz as created_at, null::timestamptz as last_accessed_at, null::jsonb as metadata
           from under where $4 and position('/' in rest) > 0 group by split_part(rest, '/', 1)
         union all
         select name, false, id, updated_at, created_at, last_accessed_at, metadata from under where not $4 or position('/' in rest) = 0
       )
       select * from items where name collate "C" > $3 order by name collate "C" limit $5`,
      [bucket, prefix, after, delimited, limit + 1],
    )
    return rows
  })
  const page = rows.slice(0, limit)
  const hasNext = rows.length > limit
  const last = page.at(-1)
  return json(200, {
    hasNext,
    ...(hasNext && last ? { nextCursor: Buffer.from(last.folder ? `${last.name}\u{10FFFF}` : last.name).toString('base64url') } : {}),
    folders: page.filter((row) => row.folder).map((row) => ({ name: row.name, key: row.name })),
    objects: page
      .filter((row) => !row.folder)
      .map((row) => ({
        name: row.name,
        key: row.name,
        id: row.id,
        updated_at: row.updated_at?.toISOString() ?? null,
        created_at: row.created_at?.toISOString() ?? null,
        last_accessed_at: row.last_accessed_at?.toISOString() ?? null,
        metadata: row.metadata,
      })),
  })
}
