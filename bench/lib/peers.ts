// The benchmarks' peers (PostGraphile and its filter plugin, node-apn) form a
// package of their own in bench/peers, so that installing Baseplane does not
// bring them (PostGraphile alone brings GraphiQL, React and Monaco). The first
// benchmark that needs them installs them from bench/peers' lock file.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'

const PEERS = new URL('../peers/', import.meta.url)
const require = createRequire(new URL('package.json', PEERS))

function ensureInstalled(): void {
  // npm writes node_modules/.package-lock.json only when an install finished.
  if (fs.existsSync(new URL('node_modules/.package-lock.json', PEERS))) return
  console.log('installing the benchmark peers in bench/peers (first use only)')
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: fileURLToPath(PEERS), stdio: ['ignore', 'inherit', 'inherit'] })
}

/** Imports a module of bench/peers (resolved from there, not from Baseplane's node_modules), installing the peers first if needed. */
export async function importPeer<T>(specifier: string): Promise<T> {
  ensureInstalled()
  return (await import(pathToFileURL(require.resolve(specifier)).href)) as T
}
