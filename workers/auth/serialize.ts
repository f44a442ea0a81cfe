// The user object in GoTrue's JSON shape (internal/models/user.go): optional
// timestamps are left out when unset, email and phone are "" rather than null,
// and `factors` is absent when the user has none.
import type { UserRow } from './db/users.ts'

function iso(value: Date | string | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined
  return (value instanceof Date ? value : new Date(value)).toISOString()
}

function isoFields(record: Record<string, unknown>, names: string[]): Record<string, unknown> {
  const out = { ...record }
  for (const name of names) {
    const value = out[name]
    if (value === null || value === undefined) {
      if (name === 'last_challenged_at') out[name] = null
      else delete out[name]
    } else out[name] = iso(value as string)
  }
  return out
}

/** A factor as GoTrue shows it: friendly_name is omitted when empty (omitempty). */
export function factorJson(factor: Record<string, unknown>): Record<string, unknown> {
  const out = isoFields(factor, ['created_at', 'updated_at', 'last_challenged_at'])
  if (!out.friendly_name) delete out.friendly_name
  // GoTrue's web_authn_aaguid (omitempty): the authenticator model of a verified WebAuthn factor, when it names one.
  if (out.web_authn_aaguid === null || out.web_authn_aaguid === undefined) delete out.web_authn_aaguid
  return out
}

export function userJson(row: UserRow): Record<string, unknown> {
  const user: Record<string, unknown> = {
    id: row.id,
    aud: row.aud ?? '',
    role: row.role ?? '',
    email: row.email ?? '',
    email_confirmed_at: iso(row.email_confirmed_at),
    invited_at: iso(row.invited_at),
    phone: row.phone ?? '',
    phone_confirmed_at: iso(row.phone_confirmed_at),
    confirmation_sent_at: iso(row.confirmation_sent_at),
    confirmed_at: iso(row.confirmed_at),
    recovery_sent_at: iso(row.recovery_sent_at),
    new_email: row.email_change || undefined,
    email_change_sent_at: iso(row.email_change_sent_at),
    last_sign_in_at: iso(row.last_sign_in_at),
    app_metadata: row.raw_app_meta_data ?? {},
    user_metadata: row.raw_user_meta_data ?? {},
    identities: (row.identities ?? []).map((identity) => isoFields(identity, ['last_sign_in_at', 'created_at', 'updated_at'])),
    factors: row.factors && row.factors.length > 0 ? row.factors.map(factorJson) : undefined,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    banned_until: iso(row.banned_until),
    deleted_at: iso(row.deleted_at),
    is_anonymous: row.is_anonymous,
  }
  for (const key of Object.keys(user)) if (user[key] === undefined) delete user[key]
  return user
}
