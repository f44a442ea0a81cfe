// SQL for external identities (auth.identities with provider 'google'):
// find the user of an identity, link an identity to a user with the same
// address, or create the user with it (GoTrue's createAccountFromExternalIdentity).
import type pg from 'pg'
import type { Queryable } from './pool.ts'

/**
 * Serialises sign-ins of one external account and of one address until the
 * transaction ends, so two first callbacks at once do not both create the user.
 */
export async function lockIdentity(client: pg.ClientBase, provider: string, providerId: string, email: string): Promise<void> {
  await client.query({
    name: 'auth_lock_identity',
    text: `select pg_advisory_xact_lock(hashtextextended('auth identity ' || $1 || ':' || $2, 0)),
                  pg_advisory_xact_lock(hashtextextended('auth email ' || $3, 0))`,
    values: [provider, providerId, email],
  })
}

/** The identity's user, its data refreshed and its sign-in stamped (GoTrue's AccountExists case). */
export async function signInIdentity(client: pg.ClientBase, provider: string, providerId: string, identityData: Record<string, unknown>): Promise<string | undefined> {
  const { rows } = await client.query<{ user_id: string }>({
    name: 'auth_sign_in_identity',
    text: `with i as (
             update auth.identities set identity_data = $3, last_sign_in_at = now(), updated_at = now()
             where provider = $1 and provider_id = $2 returning user_id
           )
           update auth.users u set raw_user_meta_data = u.raw_user_meta_data || $3::jsonb, updated_at = now()
           from i where u.id = i.user_id returning u.id as user_id`,
    values: [provider, providerId, identityData],
  })
  return rows[0]?.user_id
}

export async function userIdByEmail(client: pg.ClientBase, email: string): Promise<{ id: string; confirmed: boolean } | undefined> {
  const { rows } = await client.query<{ id: string; confirmed: boolean }>(
    'select id, email_confirmed_at is not null as confirmed from auth.users where lower(email) = $1 and not is_sso_user order by created_at limit 1 for update',
    [email],
  )
  return rows[0]
}

/**
 * Links a new identity to an existing user with the same (provider-verified)
 * address. An unconfirmed user loses its password and other identities first
 * (GoTrue's RemoveUnconfirmedIdentities: whoever signed up with an address
 * they could not confirm does not keep a way in), then is confirmed.
 */
export async function linkIdentity(
  client: pg.ClientBase,
  userId: string,
  confirmed: boolean,
  provider: string,
  providerId: string,
  identityData: Record<string, unknown>,
): Promise<void> {
  if (!confirmed) {
    await client.query(`delete from auth.identities where user_id = $1`, [userId])
    await client.query(
      `update auth.users set encrypted_password = null, raw_user_meta_data = $2, email_confirmed_at = now(),
         raw_app_meta_data = raw_app_meta_data || jsonb_build_object('provider', $3::text, 'providers', jsonb_build_array($3::text)), updated_at = now()
       where id = $1`,
      [userId, identityData, provider],
    )
    await client.query(`delete from auth.one_time_tokens where user_id = $1`, [userId])
  } else {
    await client.query(
      `update auth.users set raw_user_meta_data = raw_user_meta_data || $2::jsonb,
         raw_app_meta_data = jsonb_set(raw_app_meta_data, '{providers}',
           (select to_jsonb(array_agg(distinct p order by p)) from (
              select jsonb_array_elements_text(coalesce(raw_app_meta_data -> 'providers', '[]'::jsonb)) as p union select $3::text) ps)),
         updated_at = now()
       where id = $1`,
      [userId, identityData, provider],
    )
  }
  await client.query(
    `insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at) values ($1, $2, $3, $4, now())`,
    [providerId, userId, identityData, provider],
  )
}

/** A new user signed up through the provider: confirmed (the provider verified the address), no password. */
export async function createIdentityUser(client: pg.ClientBase, email: string, provider: string, providerId: string, identityData: Record<string, unknown>): Promise<string> {
  const { rows } = await client.query<{ id: string }>({
    name: 'auth_create_identity_user',
    text: `with u as (
             insert into auth.users (aud, role, email, email_confirmed_at, raw_app_meta_data, raw_user_meta_data)
             values ('authenticated', 'authenticated', $1, now(), jsonb_build_object('provider', $2::text, 'providers', jsonb_build_array($2::text)), $4)
             returning id
           )
           insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at)
           select $3, u.id, $4, $2, now() from u returning user_id as id`,
    values: [email, provider, providerId, identityData],
  })
  return rows[0]!.id
}

export async function deleteIdentitiesOfUser(db: Queryable, userId: string): Promise<void> {
  await db.query('delete from auth.identities where user_id = $1', [userId])
}
