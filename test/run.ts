// `npm test`: runs the whole tap suite against one PostgreSQL. With
// DATABASE_URL the suite uses that server; otherwise it starts a temporary
// embedded one and removes it afterwards.
import { spawn } from 'node:child_process'
import { startTemporary } from '../lib/db/embedded.ts'

const args = process.argv.slice(2)
const server = process.env.DATABASE_URL ? undefined : await startTemporary()
const env = { ...process.env, DATABASE_URL: process.env.DATABASE_URL ?? server!.url, BASEPLANE_LOG_LEVEL: process.env.BASEPLANE_LOG_LEVEL ?? 'silent' }
const child = spawn(process.execPath, ['node_modules/tap/dist/esm/run.mjs', ...args], { stdio: 'inherit', env })
const stop = () => child.kill('SIGTERM')
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
const code: number = await new Promise((resolve) => child.on('exit', (c) => resolve(c ?? 1)))
await server?.stop()
process.exit(code)
