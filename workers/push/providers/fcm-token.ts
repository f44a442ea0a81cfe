// OAuth access tokens for FCM from a service account, through
// google-auth-library's JWT client (RS256 assertion, jwt-bearer grant).
// The library always posts to Google's token endpoint; a platform-level
// override (tests) rewrites that one URL in its transporter.
import { JWT, gaxios } from 'google-auth-library'
import { boundedFetchImplementation } from '../../../lib/bounded-body.ts'

export const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging'
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token'

export interface ServiceAccount {
  project_id: string
  client_email: string
  private_key: string
  private_key_id?: string
}

export interface TokenSource {
  /** A current access token; `force` skips the cache (after a 401). */
  getToken(force?: boolean): Promise<string>
}

export class TokenError extends Error {
  /** True when the endpoint answered and refused (bad key); false when it could not be reached. */
  readonly refused: boolean
  constructor(message: string, refused: boolean) {
    super(message)
    this.refused = refused
  }
}

export function createTokenSource(account: ServiceAccount, tokenUrl: string = GOOGLE_TOKEN_URL): TokenSource {
  // Google's answer is a few hundred bytes: read under a bound (lib/bounded-body.ts), so a broken
  // endpoint cannot fill the push actor's thread or hold a credential check open.
  const transporter = new gaxios.Gaxios({ fetchImplementation: boundedFetchImplementation({ maxBytes: 256 * 1024, timeoutMs: 10000 }) })
  transporter.interceptors.request.add({
    resolved: async (config) => {
      if (tokenUrl !== GOOGLE_TOKEN_URL && String(config.url) === GOOGLE_TOKEN_URL) config.url = new URL(tokenUrl)
      // One retry at most: a credential check must answer within seconds.
      config.retryConfig = { ...config.retryConfig, retry: 1, retryDelay: 200 }
      return config
    },
  })
  const client = new JWT({
    email: account.client_email,
    key: account.private_key,
    keyId: account.private_key_id,
    scopes: [FCM_SCOPE],
    transporter,
  })
  return {
    async getToken(force = false) {
      try {
        // An expired expiry_date makes the JWT client, and gtoken's own cache behind it, fetch anew.
        if (force) client.credentials = { ...client.credentials, access_token: undefined, expiry_date: 1 }
        const { token } = await client.getAccessToken()
        if (!token) throw new TokenError('the token endpoint returned no access_token', true)
        return token
      } catch (err) {
        if (err instanceof TokenError) throw err
        const e = err as { message?: string; response?: { status?: number; data?: { error?: string; error_description?: string } } }
        if (e.response?.status !== undefined) {
          const data = e.response.data
          const reason = data?.error ? `${data.error}${data.error_description ? `: ${data.error_description}` : ''}` : `HTTP ${e.response.status}`
          throw new TokenError(reason, e.response.status < 500)
        }
        throw new TokenError(e.message ?? String(err), false)
      }
    },
  }
}
