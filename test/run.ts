// `npm test`: runs the whole tap suite against one PostgreSQL. With
// DATABASE_URL the suite uses that server; otherwise it starts a temporary
// embedded one and removes it afterwards.
import { spawn, spawnSync } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import { startTemporary } from '../lib/db/embedded.ts'

const tap = 'node_modules/tap/dist/esm/run.mjs'
const args = process.argv.slice(2)

// tap builds its plugin set when it is installed, from its defaults: package.json's "!@tapjs/typescript"
// takes effect only once `tap build` has run, and until then every test process (and every thread it
// starts) loads ts-node and the TypeScript compiler beside tsx. A fresh clone's first run would pay that.
const built = spawnSync(process.execPath, [tap, 'build'], { stdio: 'inherit' })
if (built.status !== 0) process.exit(built.status ?? 1)

const server = process.env.DATABASE_URL ? undefined : await startTemporary()
const env = {
  ...process.env,
  DATABASE_URL: process.env.DATABASE_URL ?? server!.url,
  BASEPLANE_LOG_LEVEL: process.env.BASEPLANE_LOG_LEVEL ?? 'silent',
  // `npm test` has just built dist/: the platforms the tests start load their threads' code from it
  // (lib/thread-module.ts), as a deployment does, rather than compiling it again through tsx in each thread.
  BASEPLANE_THREADS_FROM_BUILD: process.env.BASEPLANE_THREADS_FROM_BUILD ?? '1',
  // V8's compiled code kept on disk for every process and thread of the run (Node's compile cache).
  NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? path.join(os.tmpdir(), 'baseplane-test-compile-cache'),
}
const child = spawn(process.execPath, [tap, ...args], { stdio: 'inherit', env })
const stop = () => child.kill('SIGTERM')
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
const code: number = await new Promise((resolve) => child.on('exit', (c) => resolve(c ?? 1)))
await server?.stop()
process.exit(code)
