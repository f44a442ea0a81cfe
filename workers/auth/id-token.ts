// POST /token?grant_type=id_token: native Google sign-in
// (supabase.auth.signInWithIdToken({provider: 'google', token, nonce})). The
// app got the ID token from Google's own SDK on iOS, Android or the web; we
// check it as GoTrue's token_oidc.go does (reference/auth-clients.md §3) and
// sign the user in as the web flow does. Google stays the one provider.
import crypto from 'node:crypto'
import { log } from '../../lib/log.ts'
import { transaction } from './db/pool.ts'
import { authErrors } from './errors.ts'
import { googleIdentity, googleUser } from './google.ts'
import { googleIssuer, IdTokenError, unverifiedMember, verifyGoogleIdToken } from './google-provider.ts'
import { str, type AuthRequest } from './request.ts'
import { linkingTarget } from './identities.ts'
import { attachIdentity } from './linking.ts'
import { googleMissing } from './settings.ts'
import { issueSession, type Session } from './tokens.ts'

const GOOGLE_ISSUER = 'https://accounts.google.com'

/** GoTrue's other id_token providers and their issuers: named, they are answered as not enabled. */
const OTHER_PROVIDERS: Record<string, string> = {
  apple: 'https://appleid.apple.com',
  facebook: 'https://www.facebook.com',
  kakao: 'https://kauth.kakao.com',
  vercel_marketplace: 'https://marketplace.vercel.com',
  // Its issuer is the operator's Keycloak URL, which no project has.
  keycloak: '',
}

function isAzureIssuer(issuer: string): boolean {
  return issuer.startsWith('https://login.microsoftonline.com/') || issuer.startsWith('https://sts.windows.net/')
}

/**
 * GoTrue's getProvider: Google when named or by its issuer; any other
 * provider it knows is "not enabled"; anything else is not allowed.
 */
function checkProvider(req: AuthRequest, provider: string, issuer: string, idToken: string): void {
  if (provider === 'google' || issuer === GOOGLE_ISSUER || issuer === googleIssuer()) {
    if (googleMissing(req.settings.google).length > 0) throw authErrors.idTokenProviderDisabled(GOOGLE_ISSUER)
    return
  }
  for (const [name, known] of Object.entries(OTHER_PROVIDERS)) {
    if (provider === name || (known !== '' && issuer === known)) throw authErrors.idTokenProviderDisabled(known)
  }
  if (provider === 'azure' || isAzureIssuer(issuer)) {
    const detected = isAzureIssuer(issuer) ? issuer : unverifiedMember(idToken, 'claims', 'iss')
    if (detected === undefined || !isAzureIssuer(detected)) throw authErrors.validation('Unable to detect issuer in ID token for Azure provider')
    throw authErrors.idTokenProviderDisabled(detected)
  }
  throw authErrors.idTokenProviderNotAllowed(provider)
}

/** OpenID Connect Core 3.1.3.6: the left half of the access token's SHA-256, base64url (Google signs with RS256). */
function atHashMatches(accessToken: string, atHash: string): boolean {
  const digest = crypto.createHash('sha256').update(accessToken).digest()
  return digest.subarray(0, digest.length / 2).toString('base64url') === atHash
}

function audiencesOf(aud: unknown): string[] {
  if (typeof aud === 'string') return [aud]
  return Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : []
}

export async function idTokenGrant(req: AuthRequest): Promise<Session> {
  const body = req.body
  const idToken = str(body, 'id_token') ?? ''
  const provider = str(body, 'provider') ?? ''
  const clientId = str(body, 'client_id') ?? ''
  const issuer = str(body, 'issuer') ?? ''
  const nonce = str(body, 'nonce') ?? ''
  const accessToken = str(body, 'access_token') ?? ''
  if (idToken === '') throw authErrors.oauth('invalid request', 'id_token required')
  if (provider === '' && (clientId === '' || issuer === '')) throw authErrors.oauth('invalid request', 'provider or client_id and issuer required')
  // linkIdentity({token}): the caller's token names the user to link to. GoTrue
  // checks neither the manual linking switch nor a captcha on this path.
  const linkTarget = body.link_identity === true ? await linkingTarget(req) : undefined
  checkProvider(req, provider, issuer, idToken)

  let claims: Record<string, unknown>
  try {
    claims = await verifyGoogleIdToken(idToken)
    if (accessToken !== '' && typeof claims.at_hash === 'string' && !atHashMatches(accessToken, claims.at_hash)) {
      throw new IdTokenError('at_hash does not match the access token')
    }
  } catch (error) {
    if (!(error instanceof IdTokenError)) throw error
    log.info('google ID token refused', { ref: req.raw.project.ref, reason: String(error.message).slice(0, 200) })
    throw authErrors.oauth('invalid request', 'Bad ID token')
  }
  if (typeof claims.sub !== 'string' || claims.sub === '') throw authErrors.oauth('invalid request', 'Missing sub claim in id_token')

  // The web client and the operator's iOS and Android clients (GoTrue's comma-separated client ID list).
  const google = req.settings.google
  const accepted = [google.clientId!, ...google.additionalClientIds]
  const audiences = audiencesOf(claims.aud)
  if (!audiences.some((aud) => accepted.includes(aud))) {
    throw authErrors.oauth('invalid request', `Unacceptable audience in id_token: [${audiences.join(' ')}]`)
  }

  // The app gives Google sha256hex(raw nonce) and us the raw one, so an ID
  // token seen elsewhere cannot be replayed without the raw value.
  const tokenNonce = typeof claims.nonce === 'string' ? claims.nonce : ''
  if ((tokenNonce !== '') !== (nonce !== '')) {
    throw authErrors.oauth('invalid request', 'Passed nonce and nonce in id_token should either both exist or not.')
  }
  if (nonce !== '' && crypto.createHash('sha256').update(nonce).digest('hex') !== tokenNonce) {
    throw authErrors.oauth('invalid nonce', 'Nonces mismatch')
  }

  const identity = googleIdentity(claims)
  return transaction(req.pool, async (db) => {
    const user = linkTarget !== undefined ? await attachIdentity(db, req, linkTarget, 'google', identity) : await googleUser(db, req, identity)
    return issueSession(db, req, user, { method: 'oauth' })
  })
}
