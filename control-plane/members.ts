// Members (issue 42): the platform's own accounts, never a project's Auth
// users. The operator invites a person by email to projects with a role (an
// owner may invite to, and manage, its own project); the invitation mail's
// link sets the password; the member signs in to the dashboard with email and
// password (and a TOTP code once enrolled) and makes personal access tokens
// (`bp_pat_...`) for the admin API and the CLI. Every change is an event with
// its actor (events.ts withActor). The SQL is db/members.ts.
import crypto from 'node:crypto'
import bcrypt from 'bcrypt'
import nodemailer, { type Transporter } from 'nodemailer'
import { generateSecret, verifySync } from 'otplib'
import { BaseplaneError, platformErrors } from '../lib/errors.ts'
import { withPoolTransaction } from '../lib/db/request-transaction.ts'
import { log } from '../lib/log.ts'
import { isRef } from '../lib/refs.ts'
import { MEMBER_ROLES, type Caller, type MemberRole } from './access.ts'
import type { MailDelivery } from './auth-users.ts'
import type { ControlPlane } from './control-plane.ts'
import * as db from './db/members.ts'
import { appendEvent } from './events.ts'
import { getProject } from './projects.ts'
import type { Addressing } from './views.ts'

/** What the personal access tokens start with, so they are recognisable (and told from the admin token). */
export const TOKEN_PREFIX = 'bp_pat_'
/** bcrypt's cost, as Auth's. */
const BCRYPT_COST = 10
const INVITATION_SECONDS = 7 * 24 * 3600
const RESET_SECONDS = 3600
export const SESSION_SECONDS = 12 * 3600
const MAX_TOKEN_DAYS = 366
const DEFAULT_TOKEN_DAYS = 30
/** Failed sign-ins: this many within the window block the email (and, at ADDRESS_LIMIT, the address) until it passes. */
const FAILURE_LIMIT = 5
const ADDRESS_LIMIT = 20
const FAILURE_WINDOW_SECONDS = 15 * 60
const TOTP_PERIOD = 30
/** Compared against when the email is unknown, so an unknown address costs as much as a wrong password. */
const DUMMY_HASH = bcrypt.hashSync('baseplane-no-such-member', BCRYPT_COST)

/** What the members' mail needs: how this process sends mail and where the dashboard is. */
export interface MemberMailContext {
  mail: MailDelivery
  addressing: Addressing
}

export const memberErrors = {
  operatorOnly: () => new BaseplaneError('operator_only', 'Only the platform operator (the admin token) may do this', 403),
  notAMember: (ref: string) => new BaseplaneError('not_a_member', `You are not a member of project "${ref}"`, 403),
  insufficientRole: (ref: string, role: string) => new BaseplaneError('insufficient_role', `Your role on project "${ref}" (${role}) does not allow this`, 403),
  memberOnly: () => new BaseplaneError('member_only', "This is a member's own account: call it with a personal access token", 403),
  invalidToken: (why: string) => new BaseplaneError('invalid_token', why, 401),
  badCredentials: () => new BaseplaneError('invalid_credentials', 'Wrong email or password', 401),
  totpRequired: () => new BaseplaneError('totp_required', 'Enter the code from your authenticator app', 401).concerning('code'),
  badTotp: () => new BaseplaneError('invalid_totp', 'That code is wrong or was already used', 401).concerning('code'),
  throttled: () => new BaseplaneError('too_many_attempts', `Too many failed sign-ins; try again in ${FAILURE_WINDOW_SECONDS / 60} minutes`, 429, undefined, FAILURE_WINDOW_SECONDS),
  badLink: () => new BaseplaneError('invalid_link', 'That link is unknown, used or expired; ask for a new one', 400).concerning('token'),
  unknownMember: (email: string) => new BaseplaneError('member_not_found', `No member "${email}" on this project`, 404),
}

// ---- views -----------------------------------------------------------------

export interface MembershipView {
  email: string
  ref: string
  role: MemberRole
  /** Whether the member has accepted the invitation (set a password). */
  joined: boolean
  since: string
}

export interface MemberView {
  id: string
  email: string
  joined: boolean
  totp: boolean
  created_at: string
  projects: Array<{ ref: string; role: MemberRole }>
}

export interface TokenView {
  id: string
  name: string
  prefix: string
  created_at: string
  expires_at: string
  revoked_at: string | null
  last_used_at: string | null
  state: 'active' | 'expired' | 'revoked'
}

function membershipView(row: db.MembershipRow): MembershipView {
  return { email: row.email, ref: row.ref, role: row.role, joined: row.joined, since: row.created_at.toISOString() }
}

function tokenView(row: db.TokenRow): TokenView {
  const state = row.revoked_at ? 'revoked' : row.expires_at.getTime() <= Date.now() ? 'expired' : 'active'
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    revoked_at: row.revoked_at?.toISOString() ?? null,
    last_used_at: row.last_used_at?.toISOString() ?? null,
    state,
  }
}

// ---- checks ----------------------------------------------------------------

const sha256 = (value: string) => crypto.createHash('sha256').update(value).digest('hex')

export function validEmail(value: unknown, field = 'email'): string {
  const email = typeof value === 'string' ? value.trim().toLowerCase() : ''
  if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email) || email.length > 254) throw platformErrors.invalidArgument(`${field} must be an email address`, field)
  return email
}

export function validRole(value: unknown, field = 'role'): MemberRole {
  if (typeof value !== 'string' || !(MEMBER_ROLES as readonly string[]).includes(value)) {
    throw platformErrors.invalidArgument(`${field} must be one of ${MEMBER_ROLES.join(', ')}`, field)
  }
  return value as MemberRole
}

function validPassword(value: unknown, field = 'password'): string {
  const password = typeof value === 'string' ? value : ''
  if (password.length < 8) throw platformErrors.invalidArgument('The password must be at least 8 characters', field)
  if (Buffer.byteLength(password) > 72) throw platformErrors.invalidArgument('The password must be at most 72 bytes (bcrypt reads no more)', field)
  return password
}

// ---- who calls -------------------------------------------------------------

/** The member as a caller: their roles read now, so a changed role applies to their next request. */
export async function memberCaller(controlPlane: ControlPlane, memberId: string): Promise<Caller | undefined> {
  const member = await db.memberById(controlPlane.catalogue, memberId)
  if (member === undefined) return undefined
  const rows = await db.memberships(controlPlane.catalogue, { memberId })
  return { kind: 'member', memberId, email: member.email, roles: new Map(rows.map((r) => [r.ref, r.role])) }
}

/** The member a personal access token names; refused (401 invalid_token) when unknown, expired or revoked. */
export async function tokenCaller(controlPlane: ControlPlane, token: string): Promise<Caller> {
  const row = await db.tokenByHash(controlPlane.catalogue, sha256(token))
  if (row === undefined) throw memberErrors.invalidToken('Unknown personal access token')
  if (row.revoked_at) throw memberErrors.invalidToken('This personal access token was revoked')
  if (!row.live) throw memberErrors.invalidToken('This personal access token has expired')
  const caller = await memberCaller(controlPlane, row.member_id)
  if (caller === undefined) throw memberErrors.invalidToken('Unknown personal access token')
  return caller
}

function memberOf(caller: Caller): Extract<Caller, { kind: 'member' }> {
  if (caller.kind !== 'member') throw memberErrors.memberOnly()
  return caller
}

// ---- mail ------------------------------------------------------------------

const transports = new Map<string, Transporter>()

/** One mail to a member: through SMTP when the process has SMTP_URL, else into the catalogue's outbox; recorded either way. */
async function sendMemberMail(controlPlane: ControlPlane, context: MemberMailContext, to: string, subject: string, html: string): Promise<void> {
  const { smtpUrl, from } = context.mail
  if (smtpUrl) {
    let transport = transports.get(smtpUrl)
    if (transport === undefined) transports.set(smtpUrl, (transport = nodemailer.createTransport(smtpUrl)))
    try {
      await transport.sendMail({ from, to, subject, html })
    } catch (error) {
      log.error("a member's mail could not be sent", error, { subject })
      throw new BaseplaneError('mail_failed', 'The mail could not be sent; try again later', 503, undefined, 30)
    }
  }
  await db.recordMail(controlPlane.catalogue, { recipient: to, subject, html: smtpUrl ? null : html, delivery: smtpUrl ? 'smtp' : 'outbox' })
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

function linkMail(title: string, text: string, link: string, button: string): string {
  return `<h2>${escape(title)}</h2><p>${escape(text)}</p><p><a href="${escape(link)}">${escape(button)}</a></p>`
}

/** The members' mail kept in the outbox (no SMTP server), newest first. */
export async function memberMail(controlPlane: ControlPlane, recipient?: string, limit = 50) {
  return (await db.mailTo(controlPlane.catalogue, recipient ?? null, limit)).map((m) => ({ id: Number(m.id), to: m.recipient, subject: m.subject, html: m.html, delivery: m.delivery, at: m.at.toISOString() }))
}

// ---- the operator's and owners' operations ---------------------------------

export interface InvitationInput {
  email: string
  projects: Array<{ ref: string; role: MemberRole }>
}

/** The invitation's projects checked: refs that exist, roles of the list, each project once. */
function validInvitation(input: { email?: unknown; projects?: unknown }): InvitationInput {
  const email = validEmail(input.email)
  if (!Array.isArray(input.projects) || input.projects.length === 0) throw platformErrors.invalidArgument('projects must list at least one {ref, role}', 'projects')
  const seen = new Set<string>()
  const projects = input.projects.map((p: unknown, i) => {
    const entry = (p ?? {}) as { ref?: unknown; role?: unknown }
    if (typeof entry.ref !== 'string' || !isRef(entry.ref)) throw platformErrors.invalidArgument(`projects[${i}].ref must be a project ref`, 'projects')
    if (seen.has(entry.ref)) throw platformErrors.invalidArgument(`project "${entry.ref}" is listed twice`, 'projects')
    seen.add(entry.ref)
    return { ref: entry.ref, role: validRole(entry.role, `projects[${i}].role`) }
  })
  return { email, projects }
}

/**
 * Invites a person to projects with a role each (the caller must be able to
 * manage every one: the operator, or an owner of it). A new person gets the
 * invitation mail with the link that sets their password; one who has an
 * account already is told of the new project. Nothing is written when a
 * project is unknown or the mail cannot be sent.
 */
export async function inviteMember(controlPlane: ControlPlane, caller: Caller, input: { email?: unknown; projects?: unknown }, context: MemberMailContext): Promise<MemberView> {
  const invitation = validInvitation(input)
  for (const p of invitation.projects) {
    if (caller.kind === 'member' && caller.roles.get(p.ref) !== 'owner') {
      throw caller.roles.has(p.ref) ? memberErrors.insufficientRole(p.ref, caller.roles.get(p.ref)!) : memberErrors.notAMember(p.ref)
    }
    await getProject(controlPlane, p.ref)
  }
  const id = await withPoolTransaction(controlPlane.catalogue, async (client) => {
    const member = await db.ensureMember(client, invitation.email)
    for (const p of invitation.projects) {
      const before = await db.upsertMembership(client, member.id, p.ref, p.role)
      if (before === undefined) await appendEvent(client, 'member.invited', p.ref, { email: member.email, role: p.role })
      else if (before !== p.role) await appendEvent(client, 'member.role_changed', p.ref, { email: member.email, from: before, to: p.role })
    }
    const refs = invitation.projects.map((p) => p.ref).join(', ')
    if (member.password_hash === null) {
      const token = crypto.randomBytes(32).toString('base64url')
      await db.insertLink(client, member.id, 'invitation', sha256(token), INVITATION_SECONDS)
      const link = `${context.addressing.publicUrl}/dashboard/accept?token=${token}`
      await sendMemberMail(controlPlane, context, member.email, 'You are invited to Baseplane', linkMail('You are invited', `You are invited to the project(s) ${refs}. Choose a password to accept; the link works for 7 days.`, link, 'Accept the invitation'))
    } else {
      const link = `${context.addressing.publicUrl}/dashboard`
      await sendMemberMail(controlPlane, context, member.email, 'You have been added to a Baseplane project', linkMail('A new project', `You can now reach the project(s) ${refs}.`, link, 'Open the dashboard'))
    }
    return member.id
  })
  return (await memberView(controlPlane, id))!
}

async function memberView(controlPlane: ControlPlane, id: string): Promise<MemberView | undefined> {
  const member = await db.memberById(controlPlane.catalogue, id)
  if (member === undefined) return undefined
  const rows = await db.memberships(controlPlane.catalogue, { memberId: id })
  return {
    id: member.id,
    email: member.email,
    joined: member.password_hash !== null,
    totp: member.totp_secret !== null,
    created_at: member.created_at.toISOString(),
    projects: rows.map((r) => ({ ref: r.ref, role: r.role })),
  }
}

/** Every member with their projects (the operator's list). */
export async function listMembers(controlPlane: ControlPlane): Promise<MemberView[]> {
  const members = await db.allMembers(controlPlane.catalogue)
  const rows = await db.memberships(controlPlane.catalogue, {})
  return members.map((m) => ({
    id: m.id,
    email: m.email,
    joined: m.password_hash !== null,
    totp: m.totp_secret !== null,
    created_at: m.created_at.toISOString(),
    projects: rows.filter((r) => r.member_id === m.id).map((r) => ({ ref: r.ref, role: r.role })),
  }))
}

/** A project's members and their roles. */
export async function projectMembers(controlPlane: ControlPlane, ref: string): Promise<MembershipView[]> {
  await getProject(controlPlane, ref)
  return (await db.memberships(controlPlane.catalogue, { ref })).map(membershipView)
}

/** Changes a member's role on the project (the route asks the caller to be its owner). */
export async function setMemberRole(controlPlane: ControlPlane, ref: string, emailInput: unknown, roleInput: unknown): Promise<MembershipView> {
  const email = validEmail(emailInput)
  const role = validRole(roleInput)
  await getProject(controlPlane, ref)
  await withPoolTransaction(controlPlane.catalogue, async (client) => {
    const member = await db.memberByEmail(client, email)
    const before = member && (await db.roleOf(client, member.id, ref))
    if (member === undefined || before === undefined) throw memberErrors.unknownMember(email)
    if (before === role) return
    await db.upsertMembership(client, member.id, ref, role)
    await appendEvent(client, 'member.role_changed', ref, { email, from: before, to: role })
  })
  const row = (await db.memberships(controlPlane.catalogue, { ref })).find((r) => r.email === email)!
  return membershipView(row)
}

/** Ends a member's membership of the project (their account and other projects stay). */
export async function removeMember(controlPlane: ControlPlane, ref: string, emailInput: unknown): Promise<void> {
  const email = validEmail(emailInput)
  await getProject(controlPlane, ref)
  await withPoolTransaction(controlPlane.catalogue, async (client) => {
    const member = await db.memberByEmail(client, email)
    const role = member && (await db.deleteMembership(client, member.id, ref))
    if (member === undefined || role === undefined) throw memberErrors.unknownMember(email)
    await appendEvent(client, 'member.removed', ref, { email, role })
  })
}

// ---- the member's own ------------------------------------------------------

/** Sets the password from an invitation's link (once); answers the member's id. */
export async function acceptInvitation(controlPlane: ControlPlane, token: string, passwordInput: unknown): Promise<string> {
  const password = validPassword(passwordInput)
  const hash = await bcrypt.hash(password, BCRYPT_COST)
  return withPoolTransaction(controlPlane.catalogue, async (client) => {
    const memberId = await db.useLink(client, 'invitation', sha256(token))
    if (memberId === undefined) throw memberErrors.badLink()
    await db.setPassword(client, memberId, hash)
    const member = (await db.memberById(client, memberId))!
    for (const m of await db.memberships(client, { memberId })) await appendEvent(client, 'member.joined', m.ref, { email: member.email }, `member:${member.email}`)
    return memberId
  })
}

/**
 * Mails a password reset link to a member who has joined. An unknown email
 * is answered the same (nothing says who is a member), and sends nothing.
 */
export async function requestPasswordReset(controlPlane: ControlPlane, emailInput: unknown, context: MemberMailContext): Promise<void> {
  const email = validEmail(emailInput)
  const member = await db.memberByEmail(controlPlane.catalogue, email)
  if (member === undefined || member.password_hash === null) return
  const token = crypto.randomBytes(32).toString('base64url')
  await db.insertLink(controlPlane.catalogue, member.id, 'reset', sha256(token), RESET_SECONDS)
  const link = `${context.addressing.publicUrl}/dashboard/reset?token=${token}`
  await sendMemberMail(controlPlane, context, email, 'Reset your Baseplane password', linkMail('Reset your password', 'Someone asked to reset the password of this account. The link works for an hour; ignore this mail if it was not you.', link, 'Choose a new password'))
}

/** Sets a new password from a reset link (once) and ends the member's sessions. */
export async function resetPassword(controlPlane: ControlPlane, token: string, passwordInput: unknown): Promise<string> {
  const password = validPassword(passwordInput)
  const hash = await bcrypt.hash(password, BCRYPT_COST)
  return withPoolTransaction(controlPlane.catalogue, async (client) => {
    const memberId = await db.useLink(client, 'reset', sha256(token))
    if (memberId === undefined) throw memberErrors.badLink()
    await db.setPassword(client, memberId, hash)
    await db.deleteSessionsOf(client, memberId)
    return memberId
  })
}

function totpStep(secret: string, code: string): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined
  try {
    const epoch = Math.floor(Date.now() / 1000)
    const result = verifySync({ secret, token: code, epoch, epochTolerance: TOTP_PERIOD })
    if (!result.valid) return undefined
    return 'timeStep' in result ? (result.timeStep as number) : Math.floor(epoch / TOTP_PERIOD) + (result as { delta: number }).delta
  } catch {
    return undefined
  }
}

/**
 * Email and password (and the TOTP code once enrolled): answers the member's
 * id. Failures count against the email and the address: past the limits both
 * are refused (429) for the window, even with the right password.
 */
export async function signInMember(controlPlane: ControlPlane, input: { email: unknown; password: unknown; code?: unknown; address: string }): Promise<string> {
  const email = validEmail(input.email)
  const password = typeof input.password === 'string' ? input.password : ''
  const keys = [`email:${email}`, `address:${input.address}`]
  const pool = controlPlane.catalogue
  if ((await db.throttled(pool, keys.slice(0, 1), FAILURE_LIMIT, FAILURE_WINDOW_SECONDS)) || (await db.throttled(pool, keys.slice(1), ADDRESS_LIMIT, FAILURE_WINDOW_SECONDS))) {
    throw memberErrors.throttled()
  }
  const member = await db.memberByEmail(pool, email)
  const matches = await bcrypt.compare(password, member?.password_hash ?? DUMMY_HASH)
  if (member === undefined || member.password_hash === null || !matches) {
    await db.noteFailure(pool, keys, FAILURE_WINDOW_SECONDS)
    throw memberErrors.badCredentials()
  }
  if (member.totp_secret !== null) {
    const code = typeof input.code === 'string' ? input.code.trim() : ''
    if (code === '') throw memberErrors.totpRequired()
    const step = totpStep(member.totp_secret, code)
    if (step === undefined || !(await db.useTotpStep(pool, member.id, step))) {
      await db.noteFailure(pool, keys, FAILURE_WINDOW_SECONDS)
      throw memberErrors.badTotp()
    }
  }
  await db.clearFailures(pool, keys.slice(0, 1))
  return member.id
}

export async function openMemberSession(controlPlane: ControlPlane, memberId: string, idHash: string): Promise<void> {
  await db.insertSession(controlPlane.catalogue, memberId, idHash, SESSION_SECONDS)
}

export async function sessionMemberId(controlPlane: ControlPlane, idHash: string): Promise<string | undefined> {
  return db.sessionMember(controlPlane.catalogue, idHash)
}

export async function closeMemberSession(controlPlane: ControlPlane, idHash: string): Promise<void> {
  await db.deleteSession(controlPlane.catalogue, idHash)
}

/** The caller's own account: email, projects, TOTP. */
export async function accountOf(controlPlane: ControlPlane, caller: Caller): Promise<MemberView> {
  return (await memberView(controlPlane, memberOf(caller).memberId))!
}

export async function changePassword(controlPlane: ControlPlane, caller: Caller, current: unknown, next: unknown): Promise<void> {
  const { memberId } = memberOf(caller)
  const member = (await db.memberById(controlPlane.catalogue, memberId))!
  if (!(await bcrypt.compare(typeof current === 'string' ? current : '', member.password_hash ?? DUMMY_HASH))) {
    throw platformErrors.invalidArgument('The current password is wrong', 'current_password')
  }
  const password = validPassword(next, 'new_password')
  await db.setPassword(controlPlane.catalogue, memberId, await bcrypt.hash(password, BCRYPT_COST))
}

/** A new TOTP secret to enrol (not kept until a code from it is confirmed), with its otpauth:// URI. */
export function newTotp(caller: Caller): { secret: string; uri: string } {
  const { email } = memberOf(caller)
  const secret = generateSecret({ length: 20 })
  const query = new URLSearchParams({ algorithm: 'SHA1', digits: '6', issuer: 'Baseplane', period: String(TOTP_PERIOD), secret })
  return { secret, uri: `otpauth://totp/Baseplane:${encodeURIComponent(email)}?${query}` }
}

/** Enrols the secret once a code from it checks. */
export async function enrolTotp(controlPlane: ControlPlane, caller: Caller, secret: unknown, code: unknown): Promise<void> {
  const { memberId } = memberOf(caller)
  if (typeof secret !== 'string' || !/^[A-Z2-7]{16,64}$/.test(secret)) throw platformErrors.invalidArgument('secret must be the base32 secret shown', 'secret')
  const step = totpStep(secret, typeof code === 'string' ? code.trim() : '')
  if (step === undefined) throw platformErrors.invalidArgument('That code does not match the secret; check the clock of the device', 'code')
  await db.setTotp(controlPlane.catalogue, memberId, secret, step)
}

export async function removeTotp(controlPlane: ControlPlane, caller: Caller): Promise<void> {
  await db.setTotp(controlPlane.catalogue, memberOf(caller).memberId, null, null)
}

/** A new personal access token: the token itself is in the answer only (shown once), its hash kept. */
export async function createToken(controlPlane: ControlPlane, caller: Caller, input: { name?: unknown; expires_in_days?: unknown }): Promise<TokenView & { token: string }> {
  const { memberId } = memberOf(caller)
  const name = typeof input.name === 'string' ? input.name.trim() : ''
  if (name.length === 0 || name.length > 100) throw platformErrors.invalidArgument('name must be 1 to 100 characters', 'name')
  const days = input.expires_in_days ?? DEFAULT_TOKEN_DAYS
  if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > MAX_TOKEN_DAYS) {
    throw platformErrors.invalidArgument(`expires_in_days must be a whole number from 1 to ${MAX_TOKEN_DAYS}`, 'expires_in_days')
  }
  const token = `${TOKEN_PREFIX}${crypto.randomBytes(32).toString('base64url')}`
  const row = await db.insertToken(controlPlane.catalogue, memberId, name, sha256(token), token.slice(0, TOKEN_PREFIX.length + 6), new Date(Date.now() + days * 86400_000))
  return { ...tokenView(row), token }
}

export async function listTokens(controlPlane: ControlPlane, caller: Caller): Promise<TokenView[]> {
  return (await db.tokensOf(controlPlane.catalogue, memberOf(caller).memberId)).map(tokenView)
}

export async function revokeToken(controlPlane: ControlPlane, caller: Caller, id: string): Promise<TokenView> {
  const { memberId } = memberOf(caller)
  const row = /^[0-9a-f-]{36}$/.test(id) ? await db.revokeToken(controlPlane.catalogue, memberId, id) : undefined
  if (row === undefined) throw new BaseplaneError('token_not_found', `No token "${id.slice(0, 40)}" of yours`, 404)
  return tokenView(row)
}
