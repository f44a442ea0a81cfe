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

/** Whether an install finished (npm writes node_modules/.package-lock.json last) and holds every peer listed now. */
function installed(): boolean {
  if (!fs.existsSync(new URL('node_modules/.package-lock.json', PEERS))) return false
  // A checkout that lists a peer added since its last install needs the install again.
  const { dependencies } = JSON.parse(fs.readFileSync(new URL('package.json', PEERS), 'utf8')) as { dependencies: Record<string, string> }
  return Object.keys(dependencies).every((name) => fs.existsSync(new URL(`node_modules/${name}/package.json`, PEERS)))
}

/** Installs the peers unless they are: a parent calls it before children that import peers start, so that only one process installs. */
export function ensureInstalled(): void {
  if (installed()) return
  console.log('installing the benchmark peers in bench/peers (first use, or a peer added since)')
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: fileURLToPath(PEERS), stdio: ['ignore', 'inherit', 'inherit'] })
}

/** Imports a module of bench/peers (resolved from there, not from Baseplane's node_modules), installing the peers first if needed. */
export async function importPeer<T>(specifier: string): Promise<T> {
  ensureInstalled()
  return (await import(pathToFileURL(require.resolve(specifier)).href)) as T
}
