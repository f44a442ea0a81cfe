// `baseplane start` (what `npm start` runs): serves the platform until
// SIGINT/SIGTERM, then stops the server, the workers and the embedded
// PostgreSQL it started, leaving no process behind.
import exitHook from 'async-exit-hook'
import { log } from '../../../lib/log.ts'
import { platformDatabase, startPlatform } from '../../platform.ts'
import { keysView } from '../../views.ts'
import type { Command } from '../command.ts'

export const DEMO_REF = 'demo'

export const startCommand: Command = {
  words: ['start'],
  positionals: [],
  usage: 'start [--no-demo]',
  summary: 'Serve the platform (embedded PostgreSQL unless DATABASE_URL is set); creates a demo project on first start',
  options: { 'no-demo': { type: 'boolean' } },
  async run(context, args) {
    const { config } = context
    const database = await platformDatabase(config, true)
    const platform = await startPlatform(config, database.url)
    let stopping: Promise<void> | undefined
    const stop = () =>
      (stopping ??= (async () => {
        await platform.stop().catch((error) => log.error('stopping the platform failed', error))
        await database.embedded?.stop()
      })())
    // Runs for SIGINT, SIGTERM and normal exit; waits for the async stop.
    exitHook((done) => {
      stop().then(done, done)
    })
    let demo = undefined
    if (args.values['no-demo'] !== true) {
      const existing = (await platform.controlPlane.list()).find((p) => p.ref === DEMO_REF)
      demo = existing ?? (await platform.controlPlane.setProduct((await platform.controlPlane.create({ name: 'Demo', ref: DEMO_REF })).ref, 'auth', true))
    }
    const lines = [
      `Baseplane ${config.publicUrl} (${config.databaseUrl ? 'DATABASE_URL' : `embedded PostgreSQL in ${config.home}`})`,
      `dashboard         ${config.publicUrl}/dashboard  (sign in with the admin token)`,
      `admin API         ${config.publicUrl}/platform/v1  (Authorization: Bearer ${platform.adminToken})`,
    ]
    if (demo) {
      const keys = keysView(demo, context.addressing)
      lines.push(
        '',
        `Demo project "${demo.ref}"`,
        `base URL          ${keys.base_url}`,
        `anon key          ${keys.anon_key}`,
        `service_role key  ${keys.service_role_key}`,
      )
    }
    lines.push('', 'Press Ctrl-C to stop.')
    context.print(lines.join('\n'))
    await new Promise(() => {})
  },
}
