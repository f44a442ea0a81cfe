// `Prefer: timezone=<name>` (shared/reference/postgrest.md section 1): the
// request's transaction takes that `timezone`, so timestamps are written
// and read in it, when PostgreSQL knows the name; an unknown one is ignored
// (with handling=strict, PGRST122). Known means among pg_timezone_names, as
// PostgREST checks it: the server's own zone list (aliases such as
// US/Eastern included), read once per server by each thread, since the list
// changes only with the server's installation.
import type pg from 'pg'
import { escapeLiteral } from 'pg'
import { restErrors } from '../errors.ts'
import type { Preferences } from '../request/request.ts'

/** Zone names per database server (host:port), loading or loaded; a failed load is forgotten, so the next request tries again. */
const zonesByServer = new Map<string, Promise<ReadonlySet<string>>>()

function zonesOf(client: pg.ClientBase, server: string): Promise<ReadonlySet<string>> {
  let zones = zonesByServer.get(server)
  if (zones === undefined) {
    zones = client.query<{ name: string }>('select name from pg_catalog.pg_timezone_names').then((result) => new Set(result.rows.map((row) => row.name)))
    zones.catch(() => zonesByServer.delete(server))
    zonesByServer.set(server, zones)
  }
  return zones
}

/**
 * The zone the request is answered in, if it asked for one PostgreSQL knows;
 * undefined otherwise (then not echoed in Preference-Applied). An unknown
 * zone is PGRST122 under handling=strict.
 */
export async function honouredTimezone(client: pg.ClientBase, server: string, prefs: Preferences): Promise<string | undefined> {
  const zone = prefs.timezone
  if (zone === undefined) return undefined
  if ((await zonesOf(client, server)).has(zone)) return zone
  if (prefs.handling === 'strict') throw restErrors.strictPreferences([`timezone=${zone}`])
  return undefined
}

/** The statement that sets the transaction's zone (PostgREST sets it after the request settings, before the pre-request function). */
export const timezoneCall = (zone: string | undefined): string[] => (zone === undefined ? [] : [`select pg_catalog.set_config('timezone', ${escapeLiteral(zone)}, true)`])
