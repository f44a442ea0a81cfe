// SQL of manual identity linking (GoTrue's identity.go, linkIdentityToUser in
// external.go, and the User model's UpdateUserEmailFromIdentities and
// UpdateAppMetaDataProviders): who owns an identity, attaching one to a
// user, removing one, and the address and providers that follow.
import type pg from 'pg'

/** The user an identity belongs to, if any. */
export async function identityOwner(client: pg.ClientBase, provider: string, providerId: string): Promise<string | undefined> {
  const { rows } = await client.query<{ user_id: string }>('select user_id from auth.identities where provider = $1 and provider_id = $2', [provider, providerId])
  return rows[0]?.user_id
}

/** Locks the user row until the transaction ends: two unlinks at once cannot both pass the "one identity left" check. */
export async function lockUser(client: pg.ClientBase, userId: string): Promise<{ email: string | null } | undefined> {
  const { rows } = await client.query<{ email: string | null }>('select email from auth.users where id = $1 for update', [userId])
  return rows[0]
}

export async function insertIdentity(client: pg.ClientBase, userId: string, provider: string, providerId: string, identityData: Record<string, unknown>): Promise<void> {
  await client.query(
    'insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at) values ($1, $2, $3, $4, now())',
    [providerId, userId, identityData, provider],
  )
}

export interface UserIdentity {
  id: string
  provider: string
  provider_id: string
  email: string | null
}

/** The user's identities, oldest first. */
export async function identitiesOf(client: pg.ClientBase, userId: string): Promise<UserIdentity[]> {
  const { rows } = await client.query<UserIdentity>(
    'select id, provider, provider_id, email from auth.identities where user_id = $1 order by created_at, id',
    [userId],
  )
  return rows
}

export async function deleteIdentity(client: pg.ClientBase, id: string): Promise<void> {
  await client.query('delete from auth.identities where id = $1', [id])
}

/**
 * GoTrue's UpdateUserEmailFromIdentities: the address stays when one of the
 * user's identities has it; otherwise it becomes the address of the first
 * identity whose address no other user has (none: "" and unconfirmed).
 * Returns false when every identity's address belongs to another user.
 */
export async function emailFromIdentities(client: pg.ClientBase, userId: string): Promise<boolean> {
  const { rows } = await client.query<{ keep: boolean; email: string | null; found: boolean }>(
    `with mine as (select email, created_at, id from auth.identities where user_id = $1),
          u as (select lower(email) as email from auth.users where id = $1)
     select exists (select 1 from mine, u where mine.email = u.email) as keep,
            c.email, c.found
     from (select 1) one
     left join lateral (
       select coalesce(m.email, '') as email, true as found from mine m
       where m.email is null or m.email = '' or not exists (
         select 1 from auth.users o where lower(o.email) = m.email and o.id <> $1 and not o.is_sso_user)
       order by m.created_at, m.id limit 1
     ) c on true`,
    [userId],
  )
  const row = rows[0]!
  if (row.keep) return true
  if (!row.found) return false
  await client.query(
    `update auth.users set email = nullif($2, ''),
       email_confirmed_at = case when $2 = '' then null else email_confirmed_at end, updated_at = now()
     where id = $1`,
    [userId, row.email],
  )
  return true
}

/**
 * A user without an address takes a linked identity's verified one (GoTrue's
 * Confirm after UpdateUserEmailFromIdentities): the address counts as
 * confirmed and an anonymous user becomes permanent.
 */
export async function confirmLinkedEmail(client: pg.ClientBase, userId: string): Promise<void> {
  await client.query(
    `update auth.users set email_confirmed_at = coalesce(email_confirmed_at, now()),
       raw_user_meta_data = raw_user_meta_data || '{"email_verified": true}'::jsonb, is_anonymous = false, updated_at = now()
     where id = $1`,
    [userId],
  )
}

/**
 * GoTrue's UpdateAppMetaDataProviders: `providers` lists the user's
 * identities' providers (oldest first); `provider` stays when still among
 * them, else becomes the first (removed when none is left).
 */
export async function updateProviders(client: pg.ClientBase, userId: string): Promise<void> {
  await client.query(
    `with p as (
       select coalesce(jsonb_agg(provider order by first), '[]'::jsonb) as list
       from (select provider, min(created_at) as first from auth.identities where user_id = $1 group by provider) x
     )
     update auth.users u set raw_app_meta_data =
       case when jsonb_array_length(p.list) = 0 then (u.raw_app_meta_data - 'provider') || jsonb_build_object('providers', p.list)
            when p.list ? coalesce(u.raw_app_meta_data ->> 'provider', '') then u.raw_app_meta_data || jsonb_build_object('providers', p.list)
            else u.raw_app_meta_data || jsonb_build_object('providers', p.list, 'provider', p.list -> 0) end,
       updated_at = now()
     from p where u.id = $1`,
    [userId],
  )
}
