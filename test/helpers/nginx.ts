// A real nginx (Debian's package) in front of a platform, configured with the documented file
// (deploy/nginx/baseplane.conf, shown in docs/fleet.md) with only its ports changed. It runs as a
// child process in the foreground, with its prefix, configuration, pid, logs and temporary files
// in a folder of its own, and is stopped when the test ends.
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { freePort } from '../../lib/db/embedded.ts'
import { PACKAGE_ROOT } from '../../lib/package-root.ts'
import { acceptsConnections } from '../../dev/accepts.ts'

interface TestContext {
  teardown(fn: () => unknown): void
}

export const DOCUMENTED_CONFIG = path.join(PACKAGE_ROOT, 'deploy/nginx/baseplane.conf')

/** nginx's binary, or undefined where it is not installed (the tests that need it skip, saying so). */
export function nginxBinary(): string | undefined {
  for (const dir of ['/usr/sbin', '/usr/local/sbin', ...(process.env.PATH ?? '').split(':')]) {
    const candidate = path.join(dir, 'nginx')
    try {
      fs.accessSync(candidate, fs.constants.X_OK)
      return candidate
    } catch {}
  }
  return undefined
}

/** The documented configuration with its listen and upstream ports replaced; throws if either line moved. */
export function documentedConfig(listenPort: number, upstreamPort: number): string {
  const text = fs.readFileSync(DOCUMENTED_CONFIG, 'utf8')
  const swapped = text.replace(/^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${listenPort};`).replace(/^(\s*)server 127\.0\.0\.1:8000;$/m, `$1server 127.0.0.1:${upstreamPort};`)
  if (!swapped.includes(`listen 127.0.0.1:${listenPort};`) || !swapped.includes(`server 127.0.0.1:${upstreamPort};`)) {
    throw new Error(`${DOCUMENTED_CONFIG} no longer has the lines "listen 80;" and "server 127.0.0.1:8000;" the test replaces`)
  }
  return swapped
}

export interface RunningNginx {
  port: number
  origin: string
}

/**
 * Starts nginx in front of 127.0.0.1:`upstreamPort`. `bindAddress`: the address nginx connects to
 * the platform from (a loopback address of its own, so the platform can tell nginx from the client).
 */
export async function startNginx(t: TestContext, binary: string, upstreamPort: number, bindAddress: string): Promise<RunningNginx> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-nginx-'))
  const port = await freePort()
  fs.writeFileSync(path.join(dir, 'baseplane.conf'), documentedConfig(port, upstreamPort))
  const temp = (name: string) => path.join(dir, name)
  fs.writeFileSync(
    path.join(dir, 'nginx.conf'),
    [
      // As root, nginx's workers would otherwise run as nobody, who cannot enter this folder; as another user the directive does not apply.
      ...(process.getuid?.() === 0 ? ['user root;'] : []),
      'worker_processes 1;',
      `pid ${temp('nginx.pid')};`,
      `error_log ${temp('error.log')} warn;`,
      'events { worker_connections 256; }',
      'http {',
      `  access_log ${temp('access.log')};`,
      `  client_body_temp_path ${temp('client_body')};`,
      `  proxy_temp_path ${temp('proxy')};`,
      `  fastcgi_temp_path ${temp('fastcgi')};`,
      `  uwsgi_temp_path ${temp('uwsgi')};`,
      `  scgi_temp_path ${temp('scgi')};`,
      `  proxy_bind ${bindAddress};`,
      `  include ${temp('baseplane.conf')};`,
      '}',
      '',
    ].join('\n'),
  )
  const child: ChildProcess = spawn(binary, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', temp('error.log'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGQUIT')
      await exited
    }
    fs.rmSync(dir, { recursive: true, force: true })
  })
  // Listening once a connection is accepted; an nginx that exits (a bad configuration) says why.
  const deadline = Date.now() + 10_000
  for (;;) {
    const outcome = await Promise.race([acceptsConnections(port), exited.then((code) => ({ exited: code }))])
    if (outcome === true) break
    if (typeof outcome === 'object') {
      const log = fs.existsSync(temp('error.log')) ? fs.readFileSync(temp('error.log'), 'utf8') : ''
      throw new Error(`nginx exited with ${outcome.exited}: ${stderr}${log}`)
    }
    if (Date.now() > deadline) throw new Error(`nginx did not listen on ${port} within 10 s: ${stderr}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { port, origin: `http://127.0.0.1:${port}` }
}
