// Attaching an external identity to a signed-in user (linkIdentity(): the
// /user/identities/authorize flow's callback, and the id_token grant with
// link_identity), as GoTrue's linkIdentityToUser does (reference
// gotrue-round3.md §5, "Attach rules").
import type pg from 'pg'
import { lockIdentity } from './db/identities.ts'
import { confirmLinkedEmail, emailFromIdentities, identityOwner, insertIdentity, updateProviders } from './db/linked-identities.ts'
import { userById, type UserRow } from './db/users.ts'
import { authErrors } from './errors.ts'
import type { GoogleIdentity } from './google.ts'
import { audit } from './links.ts'
import type { AuthRequest } from './request.ts'

/**
 * Links `identity` to the user `targetId` in the caller's transaction and
 * returns the user as it now is. An identity already linked (to this user or
 * another) is refused with identity_already_exists. A user without an
 * address takes the identity's (another user's address: 400 email_exists);
 * Google has verified it (googleIdentity refuses unverified addresses), so
 * the user is confirmed and, if anonymous, becomes permanent.
 */
export async function attachIdentity(db: pg.ClientBase, req: AuthRequest, targetId: string, provider: string, identity: GoogleIdentity): Promise<UserRow> {
  await lockIdentity(db, provider, identity.sub, identity.email)
  const owner = await identityOwner(db, provider, identity.sub)
  if (owner !== undefined) throw owner === targetId ? authErrors.identityAlreadyLinked() : authErrors.identityLinkedToAnother()
  const target = await userById(db, targetId)
  // The user went away between /user/identities/authorize and the callback.
  if (target === undefined) throw authErrors.userNotFound()
  if (target.banned_until && target.banned_until > new Date()) throw authErrors.userBanned403()
  await insertIdentity(db, targetId, provider, identity.sub, identity.data)
  if (!target.email) {
    let adopted: boolean
    try {
      adopted = await emailFromIdentities(db, targetId)
    } catch (error) {
      // Another user took the address after the check (users_email_partial_key).
      if ((error as { code?: string }).code === '23505') throw authErrors.linkedEmailExists()
      throw error
    }
    if (!adopted) throw authErrors.linkedEmailExists()
    await confirmLinkedEmail(db, targetId)
  }
  await updateProviders(db, targetId)
  await audit(db, req, targetId, 'identity_linked', { provider, provider_id: identity.sub })
  return (await userById(db, targetId))!
}
