// What enabling a product does to a project's database before the switch is
// flipped in the catalogue. Auth's schema is part of every project's SQL, so
// enabling it is only the switch; push installs its schema (see workers/push).
import type { Product, ProjectRecord } from '../lib/catalogue.ts'

export interface ProductHook {
  beforeEnable?: (project: ProjectRecord, serverUrl: string) => Promise<void>
}

export const productHooks: Record<Product, ProductHook> = {
  auth: {},
  push: {},
}
