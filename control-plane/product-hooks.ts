// What enabling a product does to a project's database before the switch is
// flipped in the catalogue. Auth's schema is part of every project's SQL, so
// enabling it is only the switch; push installs its schema (see workers/push).
import type { Product, ProjectRecord } from '../lib/catalogue.ts'
import { installPushInto } from '../workers/push/face.ts'
import { adminUrlFor } from '../lib/db/server-url.ts'

export interface ProductHook {
  beforeEnable?: (project: ProjectRecord, serverUrl: string) => Promise<void>
}

export const productHooks: Record<Product, ProductHook> = {
  auth: {},
  push: {
    // Schema push and the project's VAPID key pair; Web Push is ready at once.
    beforeEnable: (project, serverUrl) => installPushInto(project, adminUrlFor(serverUrl, project.dbName)),
  },
}
