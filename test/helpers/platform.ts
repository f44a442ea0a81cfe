// A whole running platform for HTTP-level tests: its own catalogue database,
// a uWebSockets data plane on a free port, worker pools, the admin API.
// Everything it made (projects' databases and roles, the catalogue) is
// removed when the test ends.
import fs from 'node:fs'
import { baseUrlOf, type ProjectRecord } from '../../lib/catalogue.ts'
import type { PlatformConfig } from '../../lib/config.ts'
import { freePort } from '../../lib/db/embedded.ts'
import { startPlatform, type RunningPlatform } from '../../server/platform.ts'
import { createProject, setProjectProduct, type CreateProjectInput } from '../../control-plane/projects.ts'
import { createDatabase, dropCatalogue as dropCatalogueOn } from '../../dev/db.ts'
import { nodeConfig } from '../../dev/node-config.ts'
import { serverUrl } from './db.ts'

interface TestContext {
  teardown(fn: () => unknown): void
}

export interface TestProject {
  record: ProjectRecord
  ref: string
  baseUrl: string
  anonKey: string
  serviceRoleKey: string
}

export interface TestPlatform {
  /** Origin of the data plane, e.g. http://127.0.0.1:41234 */
  origin: string
  config: PlatformConfig
  platform: RunningPlatform
  catalogueUrl: string
  createProject(input?: Partial<CreateProjectInput> & { auth?: boolean; push?: boolean }): Promise<TestProject>
  /**
   * Starts another data-plane process's worth of platform on the same catalogue,
   * reached at `catalogueUrl` when given (the same database another way, such as
   * through a forwarder), with `env` over the platform's.
   */
  startAnotherNode(options?: { catalogueUrl?: string; env?: Record<string, string> }): Promise<RunningPlatform>
}

/** A catalogue database of its own, with a teardown that drops projects first. */
export async function catalogueDatabase(t: TestContext): Promise<string> {
  return createDatabase(await serverUrl(), 'bpcat')
}

/** Drops a catalogue made by catalogueDatabase() and everything its platform made. */
export async function dropCatalogue(catalogueUrl: string): Promise<void> {
  await dropCatalogueOn(await serverUrl(), catalogueUrl)
}

export async function startTestPlatform(t: TestContext, env: Record<string, string> = {}): Promise<TestPlatform> {
  const catalogueUrl = await catalogueDatabase(t)
  const config = nodeConfig(catalogueUrl, await freePort(), env)
  const nodes: RunningPlatform[] = []
  t.teardown(async () => {
    for (const node of nodes) await node.stop()
    await dropCatalogue(catalogueUrl)
    fs.rmSync(config.home, { recursive: true, force: true })
    if (config.storage.kind === 'local') fs.rmSync(config.storage.root, { recursive: true, force: true })
  })
  const platform = await startPlatform(config, catalogueUrl)
  nodes.push(platform)
  return {
    origin: config.publicUrl,
    config,
    platform,
    catalogueUrl,
    async createProject(input = {}) {
      let record = await createProject(platform.controlPlane, { name: input.name ?? 'test project', plan: input.plan, ref: input.ref })
      if (input.auth) record = await setProjectProduct(platform.controlPlane, record.ref, 'auth', true)
      if (input.push) record = await setProjectProduct(platform.controlPlane, record.ref, 'push', true)
      return {
        record,
        ref: record.ref,
        baseUrl: baseUrlOf(record.ref, config.publicUrl, config.baseDomain),
        anonKey: record.anonKey,
        serviceRoleKey: record.serviceRoleKey,
      }
    },
    async startAnotherNode(options = {}) {
      const url = options.catalogueUrl ?? catalogueUrl
      const other = nodeConfig(url, await freePort(), { ...env, ...options.env, BASEPLANE_ADMIN_TOKEN: config.adminToken! })
      t.teardown(() => fs.rmSync(other.home, { recursive: true, force: true }))
      const node = await startPlatform(other, url)
      nodes.push(node)
      return node
    },
  }
}
