// Buckets (`/bucket`), as the caller: storage.buckets is under the project's
// policies like the objects are (only service_role, which bypasses them, may
// create one until a policy says otherwise, as on Supabase).
import type { ServiceResponse } from '../../lib/service.ts'
import { callerOf, json, jsonBody, type StorageCall } from './call.ts'
import { storageErrors } from './errors.ts'
import { bucketSettingsOf } from './bucket-settings.ts'
import { checkBucketName, decodedParam } from './names.ts'
import { removeObjects } from './objects.ts'

const COLUMNS = 'id, name, owner, owner_id, public, type, file_size_limit, allowed_mime_types, created_at, updated_at'

interface BucketRow {
  id: string
  name: string
  owner: string | null
  owner_id: string | null
  public: boolean
  type: string
  file_size_limit: string | null
  allowed_mime_types: string[] | null
  created_at: Date
  updated_at: Date
}

function bucketJson(row: BucketRow) {
  return {
    id: row.id,
    name: row.name,
    owner: row.owner ?? '',
    owner_id: row.owner_id ?? undefined,
    public: row.public,
    type: row.type,
    file_size_limit: row.file_size_limit === null ? null : Number(row.file_size_limit),
    allowed_mime_types: row.allowed_mime_types,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

const settingsOf = (call: StorageCall, body: Record<string, unknown>) => bucketSettingsOf(call.project.plan, body)

const SORT_COLUMNS = new Set(['id', 'name', 'created_at', 'updated_at'])

export async function listBuckets(call: StorageCall): Promise<ServiceResponse> {
  const q = call.query
  const limit = q.has('limit') ? Number(q.get('limit')) : null
  const offset = q.has('offset') ? Number(q.get('offset')) : 0
  if ((limit !== null && (!Number.isInteger(limit) || limit < 0)) || !Number.isInteger(offset) || offset < 0) throw storageErrors.invalidRequest('limit and offset must be whole numbers')
  const column = q.get('sortColumn') ?? 'name'
  if (!SORT_COLUMNS.has(column)) throw storageErrors.invalidRequest(`sortColumn must be one of ${[...SORT_COLUMNS].join(', ')}`)
  const order = (q.get('sortOrder') ?? 'asc').toLowerCase()
  if (order !== 'asc' && order !== 'desc') throw storageErrors.invalidRequest('sortOrder must be asc or desc')
  const search = q.get('search') ?? ''
  const rows = await call.database.asCaller(callerOf(call), async (client) => {
    const { rows } = await client.query<BucketRow>(
      `select ${COLUMNS} from storage.buckets where ($1 = '' or name ilike '%' || replace(replace(replace($1, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%')
        order by ${column} ${order}, id limit $2 offset $3`,
      [search, limit, offset],
    )
    return rows
  })
  return json(200, rows.map(bucketJson))
}

export async function getBucket(call: StorageCall): Promise<ServiceResponse> {
  const id = decodedParam(call.params.id!, 'bucket')
  const row = await call.database.asCaller(callerOf(call), async (client) => (await client.query<BucketRow>(`select ${COLUMNS} from storage.buckets where id = $1`, [id])).rows[0])
  if (row === undefined) throw storageErrors.noSuchBucket()
  return json(200, bucketJson(row))
}

export async function createBucket(call: StorageCall): Promise<ServiceResponse> {
  const body = jsonBody(call)
  const name = checkBucketName(body.name ?? body.id)
  const id = body.id === undefined ? name : checkBucketName(body.id)
  const { limit, mimeTypes, isPublic } = settingsOf(call, body)
  const sub = callerOf(call).claims.sub
  await call.database
    .asCaller(callerOf(call), (client) =>
      client.query(
        `insert into storage.buckets (id, name, owner, owner_id, public, file_size_limit, allowed_mime_types)
         values ($1, $2, case when $3 ~* '^[0-9a-f-]{36}$' then $3::uuid end, $3, $4, $5, $6)`,
        [id, name, typeof sub === 'string' ? sub : null, isPublic ?? false, limit ?? null, mimeTypes ?? null],
      ),
    )
    .catch((error: unknown) => {
      if ((error as { code?: string }).code === 'KeyAlreadyExists') throw storageErrors.bucketExists()
      throw error
    })
  return json(200, { name })
}

export async function updateBucket(call: StorageCall): Promise<ServiceResponse> {
  const id = decodedParam(call.params.id!, 'bucket')
  const { limit, mimeTypes, isPublic } = settingsOf(call, jsonBody(call))
  const updated = await call.database.asCaller(callerOf(call), async (client) => {
    const { rowCount } = await client.query(
      `update storage.buckets set
         public = coalesce($2, public),
         file_size_limit = case when $3 then $4 else file_size_limit end,
         allowed_mime_types = case when $5 then $6 else allowed_mime_types end,
         updated_at = now()
       where id = $1`,
      [id, isPublic ?? null, limit !== undefined, limit ?? null, mimeTypes !== undefined, mimeTypes ?? null],
    )
    return rowCount ?? 0
  })
  if (updated === 0) throw storageErrors.noSuchBucket()
  return json(200, { message: 'Successfully updated' })
}

export async function deleteBucket(call: StorageCall): Promise<ServiceResponse> {
  const id = decodedParam(call.params.id!, 'bucket')
  const deleted = await call.database
    .asCaller(callerOf(call), async (client) => (await client.query('delete from storage.buckets where id = $1', [id])).rowCount ?? 0)
    .catch((error: unknown) => {
      // Its objects still name it (storage.objects' foreign key).
      if ((error as { code?: string }).code === '23503') throw storageErrors.bucketNotEmpty()
      throw error
    })
  if (deleted === 0) throw storageErrors.noSuchBucket()
  return json(200, { message: 'Successfully deleted' })
}

/** Removes every object of the bucket the caller may delete, in batches (each its own transaction). */
export async function emptyBucket(call: StorageCall): Promise<ServiceResponse> {
  const id = decodedParam(call.params.id!, 'bucket')
  const exists = await call.database.asCaller(callerOf(call), async (client) => (await client.query('select 1 from storage.buckets where id = $1', [id])).rowCount ?? 0)
  if (exists === 0) throw storageErrors.noSuchBucket()
  for (;;) {
    const removed = await removeObjects(call, id, undefined, 1000)
    if (removed < 1000) break
  }
  return json(200, { message: 'Successfully emptied' })
}
