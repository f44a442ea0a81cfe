// Starts and stops bench:rest's PostGraphile (bench/lib/rest-postgraphile-server.ts)
// in a child process of the same Node, with the same loader.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import type { PeerSettings } from './rest-postgraphile-server.ts'

export interface PostGraphilePeer {
  /** http://127.0.0.1:<port>; GraphQL at /graphql. */
  origin: string
  close(): Promise<void>
}

const SERVER = fileURLToPath(new URL('./rest-postgraphile-server.ts', import.meta.url))
const START_MS = 60_000

export async function startPostGraphile(settings: PeerSettings): Promise<PostGraphilePeer> {
  const child = spawn(process.execPath, [...process.execArgv, SERVER], {
    env: { ...process.env, GRAPHILE_ENV: 'production', BENCH_REST_POSTGRAPHILE: JSON.stringify(settings) },
    // Its standard input is its lifeline: it exits when this process's end closes the pipe.
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const exited = once(child, 'exit')
  const port = await new Promise<number>((resolve, reject) => {
    let seen = ''
    const timer = setTimeout(() => reject(new Error(`PostGraphile did not start within ${START_MS / 1000} s`)), START_MS)
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString()
      const found = /listening (\d+)\n/.exec(seen)
      if (found) {
        clearTimeout(timer)
        resolve(Number(found[1]))
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`PostGraphile exited (${code}) before it served`))
    })
  })
  return {
    origin: `http://127.0.0.1:${port}`,
    async close() {
      if (child.exitCode !== null) return
      child.stdin!.end()
      await exited
    },
  }
}
