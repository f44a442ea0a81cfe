// SQL on the catalogue's fleet-wide settings (baseplane.fleet_settings): the
// admin token and the settings every node must share.
import type { Queryable } from './queryable.ts'

/** Stores `value` unless the setting has one already. */
export async function insertFleetSettingIfAbsent(db: Queryable, name: string, value: string): Promise<void> {
  await db.query(`insert into baseplane.fleet_settings (name, value) values ($1, $2) on conflict (name) do nothing`, [name, value])
}

export async function fleetSetting(db: Queryable, name: string): Promise<string | undefined> {
  const { rows } = await db.query<{ value: string }>(`select value from baseplane.fleet_settings where name = $1`, [name])
  return rows[0]?.value
}

/** One node at a time checks and writes the shared settings (until the transaction ends). */
export async function lockFleetSettings(db: Queryable): Promise<void> {
  await db.query(`select pg_advisory_xact_lock(hashtext('baseplane.fleet_settings'))`)
}

/** The stored values of these settings (those that have one). */
export async function fleetSettings(db: Queryable, names: string[]): Promise<Map<string, string>> {
  const { rows } = await db.query<{ name: string; value: string }>(`select name, value from baseplane.fleet_settings where name = any($1::text[])`, [names])
  return new Map(rows.map((row) => [row.name, row.value]))
}

/** Stores the value (set_at moves only when it changes). */
export async function upsertFleetSetting(db: Queryable, name: string, value: string): Promise<void> {
  await db.query(
    `insert into baseplane.fleet_settings (name, value) values ($1, $2)
     on conflict (name) do update set value = excluded.value, set_at = now() where baseplane.fleet_settings.value <> excluded.value`,
    [name, value],
  )
}
