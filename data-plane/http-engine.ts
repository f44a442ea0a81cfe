// Which HTTP server carries the data plane, decided once at start: the native
// uWebSockets.js build for this Node (@based/uws), or node:http when the operator
// asks for it. Never silently slow: where no native build loads and node:http was
// not asked for, start refuses and says why and what to do.
import { BaseplaneError } from '../lib/errors.ts'
import type { PlatformConfig } from '../lib/config.ts'
import { startNodeServer } from './node-server.ts'
import { MAX_HEADER_BYTES, type StartServer } from './http-server.ts'

export interface HttpEngine {
  readonly name: 'uWebSockets.js' | 'node:http'
  readonly version: string
  readonly native: boolean
  /** For the banner, the log and /metrics: "uWebSockets.js 20.51, native". */
  readonly description: string
  readonly start: StartServer
}

/** No native uWebSockets.js build loads here, and node:http was not asked for. */
export class HttpEngineUnavailable extends BaseplaneError {
  constructor(message: string) {
    super('http_engine_unavailable', message, 503)
    this.name = 'HttpEngineUnavailable'
  }
}

/** The C library version Node runs on ("2.36"), or undefined off glibc. */
export function glibcVersion(): string | undefined {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header
  return header?.glibcVersionRuntime
}

/** Why the native engine is missing and what to do, in one paragraph (the reason is the loader's last line). */
export function refusalMessage(cause: unknown, runtime = { node: process.versions.node, abi: process.versions.modules, glibc: glibcVersion(), platform: `${process.platform}-${process.arch}` }): string {
  const reason = (cause instanceof Error ? cause.message : String(cause)).trim().split('\n').pop()!.trim().replace(/^Error: /, '')
  return [
    `no native uWebSockets.js build loads on Node ${runtime.node} (ABI ${runtime.abi}, ${runtime.platform}${runtime.glibc ? `, glibc ${runtime.glibc}` : ''}): ${reason}.`,
    '@based/uws 6.0.1 has Linux builds for Node 22 (glibc 2.27 or newer) and Node 24 (glibc 2.38 or newer).',
    'Run on Node 22, or on a system with glibc 2.38 or newer for Node 24;',
    'or set BASEPLANE_HTTP_ENGINE=node to serve with node:http, which answers fewer requests per second.',
  ].join(' ')
}

export async function loadHttpEngine(choice: PlatformConfig['httpEngine']): Promise<HttpEngine> {
  if (choice === 'node') {
    return { name: 'node:http', version: process.versions.node, native: false, description: `node:http (Node ${process.versions.node}, BASEPLANE_HTTP_ENGINE=node)`, start: startNodeServer }
  }
  let uws: typeof import('./uws-server.ts')
  process.env.UWS_HTTP_MAX_HEADERS_SIZE = String(MAX_HEADER_BYTES)
  try {
    uws = await import('./uws-server.ts')
  } catch (error) {
    throw new HttpEngineUnavailable(refusalMessage(error))
  }
  return { name: 'uWebSockets.js', version: uws.UWS_VERSION, native: true, description: `uWebSockets.js ${uws.UWS_VERSION}, native`, start: uws.startUwsServer }
}
