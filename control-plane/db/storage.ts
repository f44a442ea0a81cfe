// SQL the control plane runs before Storage's own statements (workers/storage/face.ts)
// on a project's database: the open transaction made the service role's, as
// the storage API's service-role calls run (role and claims), so the owner's
// triggers on storage.buckets and storage.objects see what they would see there.
import type { Queryable } from './queryable.ts'

export async function actAsServiceRole(db: Queryable): Promise<void> {
  await db.query(
    `select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role":"service_role"}', true), set_config('request.jwt.claim.role', 'service_role', true)`,
  )
}
