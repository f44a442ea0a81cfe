// The push deliveries cap lives in the project's database, where the fan-out
// trigger refuses a send past it (sql/push/0003): written there at once when
// the plan or the operator's quotas change (the project's push sender writes
// it too whenever it claims the project or hears of a change).
import type { ProjectRecord } from '../lib/catalogue.ts'
import { adminUrlFor } from '../lib/db/server-url.ts'
import { pushSettingsOf, syncPushSettings } from '../workers/push/face.ts'
import type { ControlPlane } from './control-plane.ts'
import { withClient } from './project-database.ts'

/** Writes the plan and the deliveries cap into a push-enabled project's database. */
export async function syncProjectPushCap(controlPlane: ControlPlane, project: ProjectRecord): Promise<void> {
  if (!project.pushEnabled) return
  const url = adminUrlFor(await controlPlane.serverUrl(project.dbServer), project.dbName)
  await withClient(url, (client) => syncPushSettings(client, pushSettingsOf(project)))
}
