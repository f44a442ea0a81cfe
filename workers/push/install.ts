// Installs schema `push` into a project's database and makes the project's
// VAPID key pair: what enabling push does before the catalogue switch flips.
// Idempotent: enabling again keeps the keys and applies only new SQL files.
import pg from 'pg'
import webpush from 'web-push'
import type { Plan, ProjectRecord } from '../../lib/catalogue.ts'
import { migrate } from '../../lib/db/migrations.ts'
import { platformLoginName } from '../../lib/db/platform-logins.ts'
import { platformErrors } from '../../lib/errors.ts'
import { effectiveQuotas, quotaCaps } from '../../lib/plans.ts'

/** `client` is connected to the project's database as the admin role, outside any transaction. */
export async function installPush(client: pg.ClientBase, project: ProjectRecord): Promise<void> {
  await claimSchema(client, project)
  await migrate(client, 'push', { api_role: project.dbApiRole, platform_role: platformLoginName(project.dbApiRole, 'platform'), owner_role: project.dbOwnerRole })
  const keys = webpush.generateVAPIDKeys()
  await client.query(
    `insert into push.vapid_keys (public_key, private_key) values ($1, $2) on conflict (id) do nothing`,
    [keys.publicKey, keys.privateKey],
  )
  await syncPushSettings(client, pushSettingsOf(project))
}

/**
 * Makes sure schema `push` is the platform's. New projects get it reserved at
 * creation (sql/project/0006); a project made before that may have a `push`
 * of its owner's, which must not receive the provider keys (its owner could
 * read them, or drop the platform's tables), so enabling refuses and says how
 * to free the name. A superuser owner is the platform's admin role, whichever
 * one installed it.
 */
async function claimSchema(client: pg.ClientBase, project: ProjectRecord): Promise<void> {
  await client.query('create schema if not exists push')
  const { rows } = await client.query<{ owner: string; platform: boolean }>(
    `select r.rolname as owner, r.rolsuper as platform from pg_namespace n join pg_roles r on r.oid = n.nspowner where n.nspname = 'push'`,
  )
  const schema = rows[0]
  if (schema && !schema.platform) {
    throw platformErrors.invalidArgument(
      `Schema "push" in the database of project ${project.ref} belongs to role ${schema.owner}, not to the platform, so push cannot be installed there: ` +
        `as that role, rename it (alter schema push rename to app_push) or drop it, then enable push again`,
    )
  }
}

/** The project's push deliveries cap this month (null: none, also under `bill`). */
export function pushDeliveriesCap(project: Pick<ProjectRecord, 'plan' | 'quotaOverrides'>): number | null {
  return quotaCaps(effectiveQuotas(project.plan, project.quotaOverrides)).push_deliveries ?? null
}

/** What the fan-out trigger reads from push.settings, as of one version of the project's catalogue record. */
export interface PushSettings {
  plan: Plan
  deliveriesCap: number | null
  /** The catalogue record's version these come from. */
  version: number
}

export const pushSettingsOf = (project: Pick<ProjectRecord, 'plan' | 'quotaOverrides' | 'version'>): PushSettings => ({
  plan: project.plan,
  deliveriesCap: pushDeliveriesCap(project),
  version: project.version,
})

/**
 * Makes the plan and the deliveries cap visible to the fan-out trigger (the
 * Free plan's send_at rule, the cap at enqueue: sql/push/0003). A write from
 * an older catalogue version than the one there is ignored (sql/push/0005).
 */
export async function syncPushSettings(client: Pick<pg.ClientBase, 'query'>, settings: PushSettings): Promise<boolean> {
  const result = await client.query(
    `update push.settings set plan = $1, deliveries_cap = $2, catalogue_version = $3, updated_at = now()
      where catalogue_version < $3 or (catalogue_version = $3 and (plan is distinct from $1 or deliveries_cap is distinct from $2))`,
    [settings.plan, settings.deliveriesCap, settings.version],
  )
  return (result.rowCount ?? 0) > 0
}

/** Connects as the admin role of `serverUrl` to the project's database and installs push. */
export async function installPushInto(project: ProjectRecord, adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl, application_name: 'baseplane-push-install' })
  client.on('error', () => {})
  await client.connect()
  try {
    await installPush(client, project)
  } finally {
    await client.end().catch(() => {})
  }
}
