// A whole running platform for HTTP-level tests: its own catalogue database,
// a uWebSockets data plane on a free port, worker pools, the admin API.
// Everything it made (projects' databases and roles, the catalogue) is
// removed when the test ends.
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { escapeIdentifier } from 'pg'
import { baseUrlOf, type ProjectRecord } from '../../lib/catalogue.ts'
import { loadConfig, type PlatformConfig } from '../../lib/config.ts'
import { freePort } from '../../lib/db/embedded.ts'
import { startPlatform, type RunningPlatform } from '../../server/platform.ts'
import type { CreateProjectInput } from '../../control-plane/control-plane.ts'
import { adminQuery, serverUrl, withDatabase } from './db.ts'

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
  const server = await serverUrl()
  const name = `bpcat_${crypto.randomBytes(6).toString('hex')}`
  await adminQuery(server, `create database ${escapeIdentifier(name)}`)
  return withDatabase(server, name)
}

export async function dropCatalogue(catalogueUrl: string): Promise<void> {
  const server = await serverUrl()
  const name = new URL(catalogueUrl).pathname.slice(1)
  const { rows } = await adminQuery<{ db_name: string; db_api_role: string; db_owner_role: string }>(
    catalogueUrl,
    'select db_name, db_api_role, db_owner_role from baseplane.projects',
  ).catch(() => ({ rows: [] as Array<{ db_name: string; db_api_role: string; db_owner_role: string }> }))
  for (const row of rows) {
    await adminQuery(server, `drop database if exists ${escapeIdentifier(row.db_name)} with (force)`)
    await adminQuery(server, `drop role if exists ${escapeIdentifier(row.db_api_role)}`)
    await adminQuery(server, `drop role if exists ${escapeIdentifier(row.db_owner_role)}`)
  }
  await adminQuery(server, `drop database if exists ${escapeIdentifier(name)} with (force)`)
}

export function testConfig(catalogueUrl: string, port: number, env: Record<string, string> = {}): PlatformConfig {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'baseplane-home-'))
  return loadConfig({
    DATABASE_URL: catalogueUrl,
    PORT: String(port),
    BASEPLANE_HOME: home,
    // The fleet's token is the first node's (control-plane/fleet-settings.ts): every node of one catalogue gets the same.
    BASEPLANE_ADMIN_TOKEN: crypto.createHash('sha256').update(`admin token of ${catalogueUrl}`).digest('hex'),
    BASEPLANE_AUTH_THREADS: '1',
    BASEPLANE_GRAPHQL_THREADS: '1',
    BASEPLANE_PUSH_THREADS: '1',
    BASEPLANE_LOG_LEVEL: 'silent',
    ...env,
  })
}

export async function startTestPlatform(t: TestContext, env: Record<string, string> = {}): Promise<TestPlatform> {
  const catalogueUrl = await catalogueDatabase(t)
  const config = testConfig(catalogueUrl, await freePort(), env)
  const nodes: RunningPlatform[] = []
  t.teardown(async () => {
    for (const node of nodes) await node.stop()
    await dropCatalogue(catalogueUrl)
    fs.rmSync(config.home, { recursive: true, force: true })
  })
  const platform = await startPlatform(config, catalogueUrl)
  nodes.push(platform)
  return {
    origin: config.publicUrl,
    config,
    platform,
    catalogueUrl,
    async createProject(input = {}) {
      let record = await platform.controlPlane.create({ name: input.name ?? 'test project', plan: input.plan, ref: input.ref })
      if (input.auth) record = await platform.controlPlane.setProduct(record.ref, 'auth', true)
      if (input.push) record = await platform.controlPlane.setProduct(record.ref, 'push', true)
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
      const other = testConfig(url, await freePort(), { ...env, ...options.env, BASEPLANE_ADMIN_TOKEN: config.adminToken! })
      t.teardown(() => fs.rmSync(other.home, { recursive: true, force: true }))
      const node = await startPlatform(other, url)
      nodes.push(node)
      return node
    },
  }
}
