// Google as an OpenID provider, through google-auth-library's OAuth2Client:
// the authorization URL, the code exchange, and ID token verification
// (signature, audience, issuer, expiry) against the platform's endpoints
// (workerSection('google'): Google's by default, a local stand-in in tests).
//
// Why the certificates are fetched here: OAuth2Client.verifyIdToken fetches
// them itself, but on Node it always asks for the PEM form
// (endpoints.oauth2FederatedSignonPemCertsUrl, Google's v1 URL) while the
// platform setting is one certificates URL, Google's v3 JWKS by default. So
// we fetch the configured URL (JWKS or the PEM map), keep it for its
// Cache-Control max-age, turn JWKs into PEM, and hand them to the library's
// own verifySignedJwtWithCertsAsync with the configured issuer.
import crypto from 'node:crypto'
import { OAuth2Client, type TokenPayload } from 'google-auth-library'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { boundedFetchImplementation, fetchBounded, type AnswerBounds } from '../../lib/bounded-body.ts'
import { workerSection } from '../../lib/worker-context.ts'

export const GOOGLE_SCOPES = ['openid', 'email', 'profile']

export interface GoogleClient {
  clientId: string
  clientSecret: string
  redirectUri: string
}

/**
 * Google's token and certificate answers are a few KiB; the bound (lib/bounded-body.ts) keeps a
 * broken or impersonated endpoint from filling the Auth worker every project shares, or holding
 * a sign-in open. Past it the call fails as Google refusing would (ProviderExchangeError, IdTokenError).
 */
const GOOGLE_ANSWER: AnswerBounds = { maxBytes: 1024 * 1024, timeoutMs: 10000 }

function endpoints() {
  return workerSection('google')
}

function oauthClient(client: GoogleClient): OAuth2Client {
  const google = endpoints()
  return new OAuth2Client({
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    redirectUri: client.redirectUri,
    endpoints: { oauth2AuthBaseUrl: google.authorizationUrl, oauth2TokenUrl: google.tokenUrl },
    transporterOptions: { fetchImplementation: boundedFetchImplementation(GOOGLE_ANSWER) },
  })
}

/** Where the browser goes: scopes openid email profile (plus any asked for), our state and nonce, extra parameters passed on. */
export function authorizationUrl(client: GoogleClient, state: string, nonce: string, scopes: string[], extra: Record<string, string>): string {
  return oauthClient(client).generateAuthUrl({
    ...extra,
    scope: [...new Set([...GOOGLE_SCOPES, ...scopes])],
    state,
    nonce,
    response_type: 'code',
  })
}

export interface ProviderTokens {
  accessToken: string | undefined
  refreshToken: string | undefined
  idToken: string
}

export class ProviderExchangeError extends Error {}
export class IdTokenError extends Error {}

/** The authorization code for tokens; ProviderExchangeError when Google refuses or answers without an ID token. */
export async function exchangeCode(client: GoogleClient, code: string): Promise<ProviderTokens> {
  let tokens
  try {
    ;({ tokens } = await oauthClient(client).getToken({ code, redirect_uri: client.redirectUri }))
  } catch (error) {
    throw new ProviderExchangeError((error as Error).message)
  }
  if (!tokens.id_token) throw new ProviderExchangeError('the token response has no id_token')
  return { accessToken: tokens.access_token ?? undefined, refreshToken: tokens.refresh_token ?? undefined, idToken: tokens.id_token }
}

const certCache = new Map<string, { expires: number; certs: Record<string, string> }>()

async function fetchCerts(url: string): Promise<Record<string, string>> {
  const response = await fetchBounded(url, {}, GOOGLE_ANSWER)
  if (response.status < 200 || response.status > 299) {
    await response.discard()
    throw new IdTokenError(`certificates endpoint answered ${response.status}`)
  }
  const body = JSON.parse(await response.text()) as { keys?: Array<crypto.JsonWebKey & { kid?: string }> } & Record<string, unknown>
  const certs: Record<string, string> = {}
  if (Array.isArray(body.keys)) {
    for (const jwk of body.keys) {
      if (typeof jwk.kid !== 'string') continue
      certs[jwk.kid] = crypto.createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString()
    }
  } else {
    for (const [kid, pem] of Object.entries(body)) if (typeof pem === 'string') certs[kid] = pem
  }
  const maxAge = /max-age=(\d+)/.exec(response.headers.get('cache-control') ?? '')?.[1]
  certCache.set(url, { expires: Date.now() + (maxAge ? Number(maxAge) * 1000 : 300000), certs })
  return certs
}

async function certsFor(kid: string | undefined): Promise<Record<string, string>> {
  const url = endpoints().certsUrl
  const cached = certCache.get(url)
  // A key not seen yet may be a rotation: fetch again rather than refuse.
  if (cached && cached.expires > Date.now() && (kid === undefined || kid in cached.certs)) return cached.certs
  return fetchCerts(url)
}

/**
 * A string member of a token's header or claims read without verifying it (undefined when it is
 * missing, not a string, or the token is not a JWT): to choose a key or name an issuer, never to trust.
 */
export function unverifiedMember(idToken: string, part: 'header' | 'claims', name: string): string | undefined {
  try {
    const value = (part === 'header' ? decodeProtectedHeader(idToken) : decodeJwt(idToken))[name]
    return typeof value === 'string' ? value : undefined
  } catch {
    return undefined
  }
}

/**
 * The ID token's claims once its signature (the configured certificates),
 * issuer and expiry check out, and its audience when `audience` is given
 * (the id_token grant checks the audience itself, after the subject, as
 * GoTrue does).
 */
/** An ID token's claims as Google (or whoever signed it) sent them: callers check each claim's type at run time. */
export type IdTokenClaims = Record<string, unknown>

export async function verifyGoogleIdToken(idToken: string, audience?: string): Promise<IdTokenClaims> {
  const issuer = endpoints().issuer
  // Google signs with either form of its issuer (OpenID Connect Core 1.0, Google's discovery note).
  const issuers = issuer === 'https://accounts.google.com' ? [issuer, 'accounts.google.com'] : [issuer]
  let payload: TokenPayload | undefined
  try {
    const certs = await certsFor(unverifiedMember(idToken, 'header', 'kid'))
    const ticket = await new OAuth2Client().verifySignedJwtWithCertsAsync(idToken, certs, audience, issuers)
    payload = ticket.getPayload()
  } catch (error) {
    throw error instanceof IdTokenError ? error : new IdTokenError((error as Error).message)
  }
  if (payload === undefined) throw new IdTokenError('the ID token has no payload')
  return { ...payload }
}

/** The web flow's check: our client ID as audience, and the flow's own nonce. */
export async function verifyIdToken(client: GoogleClient, idToken: string, nonce: string): Promise<IdTokenClaims> {
  const payload = await verifyGoogleIdToken(idToken, client.clientId)
  if (payload.nonce !== nonce) throw new IdTokenError('the ID token nonce does not match the flow')
  return payload
}

/** The issuer ID tokens are checked against (Google's, or the platform's stand-in). */
export function googleIssuer(): string {
  return endpoints().issuer
}
