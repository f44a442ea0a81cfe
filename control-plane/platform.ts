// Starts one data-plane process: catalogue (migrated), every project database
// upgraded, worker pools, the uWebSockets server with the admin API.
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import type { PlatformConfig } from '../lib/config.ts'
import { startEmbedded, type EmbeddedServer } from '../lib/db/embedded.ts'
import { log, setLogLevel } from '../lib/log.ts'
import { DataPlane, type PlatformRoutes } from '../data-plane/data-plane.ts'
import { Dispatcher } from '../data-plane/dispatcher.ts'
import { Gate } from '../data-plane/gate.ts'
import { ProjectDirectory } from '../data-plane/project-directory.ts'
import { Throttle } from '../data-plane/throttle.ts'
import { startUwsServer } from '../data-plane/uws-server.ts'
import { startPushActorThread } from '../workers/push/actor-thread.ts'
import { adminApi } from './admin-api.ts'
import { authAdminRoutes } from './auth-settings.ts'
import { dashboard } from './dashboard/routes.ts'
import type { Addressing } from './views.ts'
import { ControlPlane } from './control-plane.ts'
import { VERSION } from './version.ts'

export interface RunningPlatform {
  port: number
  databaseUrl: string
  adminToken: string
  controlPlane: ControlPlane
  dataPlane: DataPlane
  throttle: Throttle
  directory: ProjectDirectory
  stop(): Promise<void>
}

/** The admin token: configured, or made once and kept in <home>/admin-token. */
export function adminTokenOf(config: Pick<PlatformConfig, 'adminToken' | 'home'>): string {
  if (config.adminToken) return config.adminToken
  const file = path.join(config.home, 'admin-token')
  try {
    return fs.readFileSync(file, 'utf8').trim()
  } catch {
    fs.mkdirSync(config.home, { recursive: true })
    const token = crypto.randomBytes(32).toString('base64url')
    fs.writeFileSync(file, token + '\n', { mode: 0o600 })
    return token
  }
}

/** DATABASE_URL, or the embedded server under <home> (started if needed). */
export async function platformDatabase(config: PlatformConfig, own: boolean): Promise<{ url: string; embedded?: EmbeddedServer }> {
  if (config.databaseUrl) return { url: config.databaseUrl }
  const embedded = await startEmbedded(config.home, config.embeddedPort, own)
  return { url: embedded.url, embedded }
}

/** The platform's own routes: the admin API, then the dashboard. */
function platformRoutes(controlPlane: ControlPlane, addressing: Addressing, adminToken: string): PlatformRoutes {
  const api = adminApi(controlPlane, addressing, adminToken, authAdminRoutes(controlPlane, addressing))
  const pages = dashboard(controlPlane, addressing, adminToken)
  return async (request) => (await api(request)) ?? (await pages(request))
}

export async function startPlatform(config: PlatformConfig, databaseUrl: string): Promise<RunningPlatform> {
  const controlPlane = await ControlPlane.open(databaseUrl)
  const upgraded = await controlPlane.upgradeAll()
  for (const [ref, versions] of upgraded) log.info('project database upgraded', { ref, versions })
  const directory = new ProjectDirectory(databaseUrl, controlPlane.catalogue)
  await directory.start()
  const throttle = new Throttle(config.throttle)
  setLogLevel(config.logLevel)
  const dispatcher = new Dispatcher({
    logLevel: config.logLevel,
    threads: config.threads,
    tasksPerThread: config.tasksPerThread,
    worker: {
      maxProjectConnections: config.maxProjectConnections,
      projectPoolSize: config.projectPoolSize,
      idleConnectionMillis: config.idleConnectionMillis,
      mail: { smtpUrl: config.smtpUrl, from: config.mailFrom },
      push: { fcmTokenUrl: config.push.fcmTokenUrl, allowInsecureWebPushEndpoints: config.push.allowInsecureWebPushEndpoints },
      google: config.google,
    },
  })
  const adminToken = adminTokenOf(config)
  const addressing = { publicUrl: config.publicUrl, baseDomain: config.baseDomain }
  const dataPlane = new DataPlane({
    config,
    directory,
    gate: new Gate(),
    throttle,
    dispatcher,
    platformRoutes: platformRoutes(controlPlane, addressing, adminToken),
    version: VERSION,
  })
  const server = await startUwsServer(dataPlane, config.host, config.port)
  // One sending actor per push-enabled project across all nodes (advisory lock), on a
  // thread of its own: sending must not take the main thread's time from routing.
  const pushActors = config.push.actors
    ? await startPushActorThread({
        catalogueUrl: databaseUrl,
        defaultServerUrl: databaseUrl,
        endpoints: { apnsUrl: config.push.apnsUrl, fcmUrl: config.push.fcmUrl, fcmTokenUrl: config.push.fcmTokenUrl },
      })
    : undefined
  let stopped: Promise<void> | undefined
  return {
    port: server.port,
    databaseUrl,
    adminToken,
    controlPlane,
    dataPlane,
    throttle,
    directory,
    stop: () =>
      (stopped ??= (async () => {
        await server.close()
        await pushActors?.stop()
        await dispatcher.close()
        await directory.close()
        await controlPlane.close()
      })()),
  }
}
