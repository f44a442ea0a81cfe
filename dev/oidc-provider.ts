// A local OpenID Connect provider standing in for Google in tests: an
// authorization endpoint that "signs in" a configured user and redirects back
// with a code, a token endpoint that checks the client and the code and
// returns an RS256 ID token signed with its own key, and the certificate
// endpoints (JWKS and PEM, as Google publishes both).
import crypto from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose'

export interface OidcUser {
  sub: string
  email: string
  email_verified?: boolean
  name?: string
  picture?: string
}

export interface IssuedCode {
  clientId: string
  redirectUri: string
  scope: string
  user: OidcUser
  nonce: string | undefined
}

/** Ways to make the next ID token wrong, to test that the platform refuses it. */
export interface Tampering {
  expired?: boolean
  audience?: string
  issuer?: string
  signWithOtherKey?: boolean
  emailVerified?: boolean
}

export interface OidcProvider {
  origin: string
  issuer: string
  authorizationUrl: string
  tokenUrl: string
  certsUrl: string
  pemCertsUrl: string
  /** The client the provider knows (what a project registers with Google). */
  client: { id: string; secret: string }
  /** Who signs in at the next /authorize. */
  user: OidcUser
  /** When set, /authorize redirects back with this OAuth error instead of a code. */
  denyWith: string | undefined
  tampering: Tampering
  /** Every /authorize request's query, for assertions. */
  authorizeRequests: URLSearchParams[]
  tokenRequests: URLSearchParams[]
  /**
   * An ID token as Google's SDKs hand one to a native app (iOS, Android, One
   * Tap) for native sign-in: for `audience` (the app's client ID), with the
   * `nonce` claim the app asked for, honouring `tampering`.
   */
  mintIdToken(options: { audience: string | string[]; nonce?: string; user?: Partial<OidcUser>; omitSub?: boolean; accessToken?: string }): Promise<string>
  close(): Promise<void>
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

async function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  if ((req.headers['content-type'] ?? '').includes('application/json')) {
    return new URLSearchParams(JSON.parse(text || '{}') as Record<string, string>)
  }
  return new URLSearchParams(text)
}

export async function startOidcProvider(): Promise<OidcProvider> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
  const other = await generateKeyPair('RS256')
  const kid = crypto.randomBytes(8).toString('hex')
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' }
  const pem = crypto.createPublicKey({ key: jwk as crypto.JsonWebKey, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString()
  const codes = new Map<string, IssuedCode>()

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    handle(url, req, res).catch((error: Error) => send(res, 500, { error: 'server_error', error_description: error.message }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const provider: OidcProvider = {
    origin,
    issuer: origin,
    authorizationUrl: `${origin}/o/oauth2/v2/auth`,
    tokenUrl: `${origin}/token`,
    certsUrl: `${origin}/oauth2/v3/certs`,
    pemCertsUrl: `${origin}/oauth2/v1/certs`,
    client: { id: `${crypto.randomBytes(6).toString('hex')}.apps.example.test`, secret: crypto.randomBytes(18).toString('base64url') },
    user: { sub: '1234567890', email: 'ada@example.com', email_verified: true, name: 'Ada Lovelace', picture: 'https://example.test/ada.png' },
    denyWith: undefined,
    tampering: {},
    authorizeRequests: [],
    tokenRequests: [],
    mintIdToken: (options) => sign({ ...provider.user, ...options.user }, options.audience, options.nonce, { omitSub: options.omitSub, accessToken: options.accessToken }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }

  async function idToken(issued: IssuedCode): Promise<string> {
    return sign(issued.user, issued.clientId, issued.nonce)
  }

  async function sign(user: OidcUser, audience: string | string[], nonce: string | undefined, extra: { omitSub?: boolean; accessToken?: string } = {}): Promise<string> {
    const t = provider.tampering
    const now = Math.floor(Date.now() / 1000)
    const claims: Record<string, unknown> = {
      azp: Array.isArray(audience) ? audience[0] : audience,
      ...(extra.omitSub ? {} : { sub: user.sub }),
      email: user.email,
      email_verified: t.emailVerified ?? user.email_verified ?? true,
      name: user.name,
      picture: user.picture,
      ...(nonce ? { nonce } : {}),
    }
    if (extra.accessToken) {
      const digest = crypto.createHash('sha256').update(extra.accessToken).digest()
      claims.at_hash = digest.subarray(0, 16).toString('base64url')
    }
    const key: CryptoKey = t.signWithOtherKey ? other.privateKey : privateKey
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
      .setIssuer(t.issuer ?? provider.issuer)
      .setAudience(t.audience ?? audience)
      .setIssuedAt(t.expired ? now - 7200 : now)
      .setExpirationTime(t.expired ? now - 3600 : now + 3600)
      .sign(key)
  }

  async function handle(url: URL, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method === 'GET' && url.pathname === '/o/oauth2/v2/auth') {
      const q = url.searchParams
      provider.authorizeRequests.push(q)
      const redirectUri = q.get('redirect_uri')
      if (q.get('client_id') !== provider.client.id || !redirectUri) {
        send(res, 400, { error: 'invalid_request', error_description: 'unknown client_id or missing redirect_uri' })
        return
      }
      const back = new URL(redirectUri)
      if (q.get('state')) back.searchParams.set('state', q.get('state')!)
      if (provider.denyWith) {
        back.searchParams.set('error', provider.denyWith)
      } else {
        const code = crypto.randomBytes(16).toString('base64url')
        codes.set(code, { clientId: provider.client.id, redirectUri, scope: q.get('scope') ?? '', user: { ...provider.user }, nonce: q.get('nonce') ?? undefined })
        back.searchParams.set('code', code)
      }
      res.writeHead(302, { location: back.toString() })
      res.end()
      return
    }
    if (req.method === 'POST' && url.pathname === '/token') {
      const form = await readForm(req)
      provider.tokenRequests.push(form)
      let clientId = form.get('client_id')
      let clientSecret = form.get('client_secret')
      const basic = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? '')
      if (basic) [clientId, clientSecret] = Buffer.from(basic[1]!, 'base64').toString().split(':') as [string, string]
      if (clientId !== provider.client.id || clientSecret !== provider.client.secret) {
        send(res, 401, { error: 'invalid_client', error_description: 'The OAuth client was not found.' })
        return
      }
      const issued = codes.get(form.get('code') ?? '')
      if (form.get('grant_type') !== 'authorization_code' || !issued || issued.redirectUri !== form.get('redirect_uri')) {
        send(res, 400, { error: 'invalid_grant', error_description: 'Bad Request' })
        return
      }
      codes.delete(form.get('code')!)
      send(res, 200, {
        access_token: crypto.randomBytes(24).toString('base64url'),
        expires_in: 3599,
        scope: issued.scope,
        token_type: 'Bearer',
        id_token: await idToken(issued),
      })
      return
    }
    if (req.method === 'GET' && url.pathname === '/oauth2/v3/certs') {
      send(res, 200, { keys: [jwk] }, { 'cache-control': 'public, max-age=60' })
      return
    }
    if (req.method === 'GET' && url.pathname === '/oauth2/v1/certs') {
      send(res, 200, { [kid]: pem }, { 'cache-control': 'public, max-age=60' })
      return
    }
    send(res, 404, { error: 'not_found' })
  }

  return provider
}
