// Stand-ins for FCM HTTP v1 (an HTTP/2 server) and Google's OAuth token
// endpoint (HTTP/1.1, as google-auth-library posts there): the token endpoint
// verifies the RS256 assertion against the service account's public key and
// `aud`; the send endpoint checks the Bearer token, the project and the
// message shape, and answers errors in FCM's shape (FcmError detail).
import crypto from 'node:crypto'
import http from 'node:http'
import https from 'node:https'
import http2 from 'node:http2'
import { closableHttp2 } from './h2c.ts'
import type { AddressInfo } from 'node:net'
import { verifyJws } from './keys.ts'

export interface FcmAnswer {
  status: number
  code: string
  retryAfter?: number
}

export interface FcmPeer {
  url: string
  tokenUrl: string
  /** Registers a service account the token endpoint will accept. */
  allow(clientEmail: string, projectId: string, publicKey: crypto.KeyObject): void
  delivered: { project: string; message: Record<string, any> }[]
  tokensIssued: number
  script: Map<string, FcmAnswer[]>
  /** Every access token issued so far answers 401 from now on. */
  revokeAccessTokens(): void
  close(): Promise<void>
}

const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token'
const SCOPE = 'https://www.googleapis.com/auth/firebase.messaging'

function fcmError(status: number, code: string): string {
  const statusName: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE' }
  const fcmCodes = new Set(['UNREGISTERED', 'SENDER_ID_MISMATCH', 'QUOTA_EXCEEDED', 'UNAVAILABLE', 'INTERNAL', 'THIRD_PARTY_AUTH_ERROR', 'INVALID_ARGUMENT'])
  return JSON.stringify({
    error: {
      code: status,
      message: code,
      status: statusName[status] ?? 'UNKNOWN',
      details: fcmCodes.has(code) ? [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: code }] : [],
    },
  })
}

export interface FcmPeerOptions {
  /** Serve both endpoints over TLS with this certificate (https:), as Google does; plain h2c and http otherwise. */
  tls?: { key: string; cert: string }
}

export async function startFcmPeer(options: FcmPeerOptions = {}): Promise<FcmPeer> {
  const accounts = new Map<string, { projectId: string; publicKey: crypto.KeyObject }>()
  const tokens = new Map<string, { projectId: string; revoked: boolean }>()
  const delivered: FcmPeer['delivered'] = []
  const script = new Map<string, FcmAnswer[]>()
  const peer = { tokensIssued: 0 }

  const tokenServer = (options.tls ? https.createServer(options.tls) : http.createServer()).on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      const refuse = (description: string) => {
        res.writeHead(400, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: 'invalid_grant', error_description: description }))
      }
      const form = new URLSearchParams(body)
      if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return refuse('Invalid grant_type')
      const assertion = form.get('assertion') ?? ''
      let claims: Record<string, unknown>
      try {
        claims = JSON.parse(Buffer.from(assertion.split('.')[1] ?? '', 'base64url').toString())
      } catch {
        return refuse('Invalid JWT')
      }
      const account = accounts.get(String(claims.iss))
      if (!account) return refuse('Invalid grant: account not found')
      const verified = verifyJws(assertion, account.publicKey, 'RS256')
      if (!verified.ok) return refuse('Invalid JWT Signature.')
      if (claims.aud !== GOOGLE_TOKEN_URL) return refuse('Invalid JWT: audience')
      if (!String(claims.scope ?? '').split(' ').includes(SCOPE)) return refuse('Invalid scope')
      const now = Date.now() / 1000
      if (typeof claims.exp !== 'number' || claims.exp < now || typeof claims.iat !== 'number' || claims.iat > now + 300) return refuse('Invalid JWT: Token must be a short-lived token')
      const accessToken = `ya29.${crypto.randomBytes(24).toString('base64url')}`
      tokens.set(accessToken, { projectId: account.projectId, revoked: false })
      peer.tokensIssued++
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ access_token: accessToken, expires_in: 3599, token_type: 'Bearer' }))
    })
  })

  const settings = { maxConcurrentStreams: 1000 }
  const server = options.tls ? http2.createSecureServer({ ...options.tls, settings }) : http2.createServer({ settings })
  const closeServer = closableHttp2(server)
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {})
    let body = ''
    stream.setEncoding('utf8')
    stream.on('data', (c: string) => (body += c))
    stream.on('end', () => {
      const reply = (status: number, payload: string, retryAfter?: number) => {
        const h: http2.OutgoingHttpHeaders = { ':status': status, 'content-type': 'application/json' }
        if (retryAfter !== undefined) h['retry-after'] = String(retryAfter)
        stream.respond(h)
        stream.end(payload)
      }
      const match = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(String(headers[':path']))
      if (!match || headers[':method'] !== 'POST') return reply(404, fcmError(404, 'NOT_FOUND'))
      const bearer = String(headers.authorization ?? '').replace(/^Bearer /, '')
      const grant = tokens.get(bearer)
      if (!grant || grant.revoked) return reply(401, fcmError(401, 'UNAUTHENTICATED'))
      if (grant.projectId !== match[1]) return reply(403, fcmError(403, 'PERMISSION_DENIED'))
      let parsed: { message?: Record<string, any> }
      try {
        parsed = JSON.parse(body)
      } catch {
        return reply(400, fcmError(400, 'INVALID_ARGUMENT'))
      }
      const message = parsed.message
      if (!message || typeof message.token !== 'string') return reply(400, fcmError(400, 'INVALID_ARGUMENT'))
      for (const value of Object.values(message.data ?? {})) {
        if (typeof value !== 'string') return reply(400, fcmError(400, 'INVALID_ARGUMENT'))
      }
      if (message.android?.ttl !== undefined && !/^\d+(\.\d+)?s$/.test(message.android.ttl)) return reply(400, fcmError(400, 'INVALID_ARGUMENT'))
      const canned = script.get(message.token)?.shift()
      if (canned) return reply(canned.status, fcmError(canned.status, canned.code), canned.retryAfter)
      if (message.token.startsWith('unreg')) return reply(404, fcmError(404, 'UNREGISTERED'))
      delivered.push({ project: match[1]!, message })
      reply(200, JSON.stringify({ name: `projects/${match[1]}/messages/${crypto.randomBytes(8).toString('hex')}` }))
    })
  })

  await new Promise<void>((resolve) => tokenServer.listen(0, '127.0.0.1', resolve))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const scheme = options.tls ? 'https' : 'http'
  return {
    url: `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tokenUrl: `${scheme}://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/token`,
    allow: (email, projectId, publicKey) => accounts.set(email, { projectId, publicKey }),
    delivered,
    get tokensIssued() {
      return peer.tokensIssued
    },
    script,
    revokeAccessTokens: () => {
      for (const grant of tokens.values()) grant.revoked = true
    },
    close: async () => {
      tokenServer.closeAllConnections()
      await Promise.all([closeServer(), new Promise((r) => tokenServer.close(r))])
    },
  }
}
