// A hostile HTTP peer (a real node:http server on 127.0.0.1) for the tests of
// every outbound call the platform makes on a tenant's behalf: it answers each
// request in one of the ways a broken or malicious endpoint does, and records
// how many bytes it managed to hand to the socket before the caller closed it,
// which is what shows the caller stopped reading at its limit.
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export type HostileMode =
  /** 200 application/json, chunked, 64 KiB chunks as fast as the socket takes them, never ending. */
  | 'endless'
  /** 200 application/json with a Content-Length of 10 GiB, then bytes as fast as the socket takes them. */
  | 'huge-length'
  /** 200 application/json, chunked, one byte a second, never ending. */
  | 'trickle'
  /** Reads the request, then never answers (no status line, no headers). */
  | 'silent'
  /** 307 to itself, every time. */
  | 'redirect-loop'

export interface HostileRequest {
  mode: HostileMode
  path: string
  body: string
  /** Body bytes the server handed to the socket (headers not counted). */
  written: number
  /** Resolves when the caller's side of the connection is gone. */
  closed: Promise<void>
  startedAt: number
  closedAt: number | undefined
}

export interface HostilePeer {
  url: string
  requests: HostileRequest[]
}

const CHUNK = Buffer.alloc(64 * 1024, '7')

/** `modeOf` picks each request's treatment from its path and body. */
export async function startHostilePeer(t: { teardown(fn: () => unknown): void }, modeOf: (path: string, body: string) => HostileMode): Promise<HostilePeer> {
  const requests: HostileRequest[] = []
  const timers = new Set<NodeJS.Timeout>()
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      let resolveClosed!: () => void
      const request: HostileRequest = {
        mode: modeOf(req.url ?? '/', body),
        path: req.url ?? '/',
        body,
        written: 0,
        closed: new Promise((resolve) => (resolveClosed = resolve)),
        startedAt: Date.now(),
        closedAt: undefined,
      }
      requests.push(request)
      let gone = false
      res.on('close', () => {
        gone = true
        request.closedAt = Date.now()
        resolveClosed()
      })
      const flood = () => {
        // Writes while the socket takes them, then waits for it to drain: what a fast peer can push.
        while (!gone) {
          request.written += CHUNK.length
          if (!res.write(CHUNK)) return void res.once('drain', flood)
        }
      }
      switch (request.mode) {
        case 'endless':
          res.writeHead(200, { 'content-type': 'application/json' })
          res.write('{"padding": "')
          return flood()
        case 'huge-length':
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(10 * 1024 ** 3) })
          return flood()
        case 'trickle': {
          res.writeHead(200, { 'content-type': 'application/json' })
          res.flushHeaders()
          const timer = setInterval(() => {
            if (gone) return clearInterval(timer)
            request.written += 1
            res.write(' ')
          }, 1000)
          timers.add(timer)
          return
        }
        case 'silent':
          return
        case 'redirect-loop':
          res.writeHead(307, { location: req.url ?? '/' }).end()
          return
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    for (const timer of timers) clearInterval(timer)
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests }
}
