// GET /user/identities/authorize and DELETE /user/identities/{identity_id}:
// linkIdentity() and unlinkIdentity() (GoTrue's identity.go; reference
// gotrue-round3.md §5). Both need a user token, then the project's manual
// linking switch (security_manual_linking_enabled, off by default as in
// GoTrue). The list is GET /user's `identities` (getUserIdentities()).
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import { deleteIdentity, emailFromIdentities, identitiesOf, lockUser, updateProviders } from './db/linked-identities.ts'
import { transaction } from './db/pool.ts'
import { currentUser } from './current-user.ts'
import { authErrors } from './errors.ts'
import { googleAuthorizationUrl } from './google.ts'
import { audit } from './links.ts'
import { isUuid, requireUser, type AuthRequest } from './request.ts'

/** GoTrue's requireAuthentication, then requireManualLinkingEnabled. */
async function linkingUser(req: AuthRequest) {
  requireUser(req)
  if (!req.settings.manualLinkingEnabled) throw authErrors.manualLinkingDisabled()
  return currentUser(req)
}

/** The user an id_token grant with link_identity links to: GoTrue's token_oidc.go wants an Authorization header first. */
export async function linkingTarget(req: AuthRequest): Promise<string> {
  if (!req.raw.headers.authorization) throw authErrors.oauth('invalid request', 'Linking requires a valid user access token in Authorization')
  return (await currentUser(req)).user.id
}

/**
 * The provider's authorization URL for a flow whose callback links the
 * identity to the caller: `{url}` with skip_http_redirect=true (auth-js
 * always sends it), else a 302 to it.
 */
export async function linkIdentity(req: AuthRequest): Promise<ServiceResponse> {
  const { user } = await linkingUser(req)
  const url = await googleAuthorizationUrl(req, user.id)
  if (req.query.get('skip_http_redirect') === 'true') return json(200, { url })
  return { status: 302, headers: { location: url, 'content-type': 'text/plain' }, body: '' }
}

/**
 * Removes one of the caller's identities. The user must keep at least one
 * (each remaining identity is a way in: Google, or the address's password,
 * magic link and recovery). The address follows the remaining identities and
 * app_metadata.providers is recomputed, as in GoTrue.
 */
export async function unlinkIdentity(req: AuthRequest, rawId: string): Promise<ServiceResponse> {
  const { user } = await linkingUser(req)
  if (!isUuid(rawId)) throw authErrors.validation404('identity_id must be an UUID')
  const id = rawId.toLowerCase()
  await transaction(req.pool, async (db) => {
    await lockUser(db, user.id)
    const identities = await identitiesOf(db, user.id)
    if (identities.length <= 1) throw authErrors.singleIdentityNotDeletable()
    const identity = identities.find((i) => i.id === id)
    if (identity === undefined) throw authErrors.identityNotFound()
    await audit(db, req, user.id, 'identity_unlinked', { identity_id: identity.id, provider: identity.provider, provider_id: identity.provider_id })
    await deleteIdentity(db, identity.id)
    let kept: boolean
    try {
      kept = await emailFromIdentities(db, user.id)
    } catch (error) {
      // Another user took the address after the check (users_email_partial_key).
      if ((error as { code?: string }).code === '23505') throw authErrors.emailConflictIdentityNotDeletable()
      throw error
    }
    if (!kept) throw authErrors.emailConflictIdentityNotDeletable()
    await updateProviders(db, user.id)
  })
  return json(200, {})
}
