// The data API's settings of a project (issue 29 item 4), as the operator sees
// and sets them through the admin API (admin-api/rest.ts), the CLI
// (`baseplane projects rest`) and the dashboard's REST tab: the exposed
// schemas, PostgREST's `db-schemas`. The list is checked whole before anything
// is saved (lib/pg-catalog/exposed-schemas.ts), saved on the project's row,
// and the operation waits until every node has it, so the next request is
// served with it. A schema that does not exist yet may be listed: it serves
// nothing until it is created (and its grants given).
import { platformErrors } from '../lib/errors.ts'
import { readExposedSchemas } from '../lib/pg-catalog/exposed-schemas.ts'
import type { ControlPlane } from './control-plane.ts'
import { getProject } from './projects.ts'
import * as db from './db/rest-settings.ts'

/** A project's data API settings as the admin API, the CLI and the dashboard show them. */
export interface RestSettingsView {
  ref: string
  /** The exposed schemas, the default (a request without a profile header) first. */
  schemas: string[]
}

export interface RestSettingsChange {
  schemas: string[]
}

export async function getRestSettings(controlPlane: ControlPlane, ref: string): Promise<RestSettingsView> {
  const project = await getProject(controlPlane, ref)
  return { ref: project.ref, schemas: project.restSchemas }
}

/** The admin API's body, `{schemas: [...]}`, checked whole before anything is saved. */
export function restSettingsChangeFromBody(body: Record<string, unknown>): RestSettingsChange {
  const unknown = Object.keys(body).find((key) => key !== 'schemas')
  if (unknown !== undefined) throw platformErrors.invalidArgument(`Unknown setting "${unknown.slice(0, 40)}": use schemas`, unknown)
  if (!('schemas' in body)) throw platformErrors.invalidArgument('Give schemas: the list of exposed schemas, such as ["public", "api"]', 'schemas')
  return { schemas: readExposedSchemas(body.schemas) }
}

/** Saves a checked change and waits until every node has it. */
export async function setRestSettings(controlPlane: ControlPlane, ref: string, change: RestSettingsChange): Promise<RestSettingsView> {
  const project = await getProject(controlPlane, ref)
  const schemas = readExposedSchemas(change.schemas)
  if (!(await db.writeRestSchemas(controlPlane.catalogue, project.ref, schemas))) throw platformErrors.unknownProject(ref)
  await controlPlane.changed()
  return getRestSettings(controlPlane, ref)
}
