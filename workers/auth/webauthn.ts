// The WebAuthn ceremonies of a second factor, with @simplewebauthn/server:
// creation options for an unverified factor and request options for a
// verified one (W3C PublicKeyCredential*OptionsJSON, base64url, as GoTrue
// 2.181+ serves them in `webauthn.credential_options.publicKey`), and the
// checks of the browser's answer (WebAuthn L3 §7.1 registration, §7.2
// assertion) against the stored challenge and the project's relying party.
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server'
import { CHALLENGE_EXPIRY_SECONDS } from './db/factors.ts'
import type { WebAuthnSettings } from './webauthn-settings.ts'

/** What auth.mfa_factors.web_authn_credential holds once a factor is verified (ours; GoTrue stores go-webauthn's Credential). */
export interface StoredCredential {
  /** The credential id, base64url (the browser's `rawId`). */
  id: string
  /** The COSE public key, base64url. */
  public_key: string
  /** The authenticator's signature counter at the last accepted assertion. */
  sign_count: number
  transports: string[]
  attestation_format: string
  device_type: string
  backed_up: boolean
}

/** What auth.mfa_challenges.web_authn_session_data holds: the ceremony the challenge belongs to. */
export interface CeremonyState {
  type: 'create' | 'request'
  challenge: string
}

export type CeremonyOptions =
  | { type: 'create'; publicKey: PublicKeyCredentialCreationOptionsJSON }
  | { type: 'request'; publicKey: PublicKeyCredentialRequestOptionsJSON }

/** Why the browser's answer was refused (the library's own words: what did not match). */
export class CeremonyRefused extends Error {}

const TIMEOUT_MS = CHALLENGE_EXPIRY_SECONDS * 1000
// A second factor proves possession; like GoTrue (go-webauthn's default "preferred"), user verification is asked for, not required.
const USER_VERIFICATION = 'preferred'

const descriptor = (c: StoredCredential) => ({ id: c.id, transports: c.transports as AuthenticatorTransport[] })

/** Registration: the user handle is the user's id (16 bytes); the user's verified credentials are excluded, so one authenticator is not enrolled twice. */
export async function creationOptions(
  rp: WebAuthnSettings,
  user: { id: string; name: string; displayName: string },
  existing: StoredCredential[],
): Promise<CeremonyOptions> {
  const publicKey = await generateRegistrationOptions({
    rpName: rp.rpDisplayName,
    rpID: rp.rpId,
    userID: Buffer.from(user.id.replace(/-/g, ''), 'hex'),
    userName: user.name,
    userDisplayName: user.displayName,
    timeout: TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: existing.map(descriptor),
    authenticatorSelection: { residentKey: 'discouraged', userVerification: USER_VERIFICATION },
  })
  return { type: 'create', publicKey }
}

/** Assertion: any of the user's verified WebAuthn credentials may answer (GoTrue lists them all). */
export async function requestOptions(rp: WebAuthnSettings, credentials: StoredCredential[]): Promise<CeremonyOptions> {
  const publicKey = await generateAuthenticationOptions({
    rpID: rp.rpId,
    allowCredentials: credentials.map(descriptor),
    timeout: TIMEOUT_MS,
    userVerification: USER_VERIFICATION,
  })
  return { type: 'request', publicKey }
}

/** What both ceremonies expect of a response: the challenge handed out, the RP's origins and id; user presence is enough. */
function expectations(rp: WebAuthnSettings, state: CeremonyState) {
  return { expectedChallenge: state.challenge, expectedOrigin: rp.rpOrigins, expectedRPID: rp.rpId, requireUserVerification: false }
}

/** `verify`'s result; what it throws (a malformed or mismatched response) as CeremonyRefused. */
async function checked<T>(verify: () => Promise<T>): Promise<T> {
  try {
    return await verify()
  } catch (error) {
    throw new CeremonyRefused(error instanceof Error ? error.message : 'the response could not be checked')
  }
}

/** Checks an attestation; the credential to store, and the authenticator's model (null when it names none). */
export async function verifyCreation(
  rp: WebAuthnSettings,
  state: CeremonyState,
  response: RegistrationResponseJSON,
): Promise<{ credential: StoredCredential; aaguid: string | null }> {
  const result = await checked(() => verifyRegistrationResponse({ response, ...expectations(rp, state) }))
  if (!result.verified) throw new CeremonyRefused('the attestation was not verified')
  const info = result.registrationInfo
  return {
    credential: {
      id: info.credential.id,
      public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
      sign_count: info.credential.counter,
      transports: info.credential.transports ?? response.response.transports ?? [],
      attestation_format: info.fmt,
      device_type: info.credentialDeviceType,
      backed_up: info.credentialBackedUp,
    },
    // GoTrue stores an all-zero AAGUID (an authenticator that does not say its model) as NULL.
    aaguid: /^[0-]+$/.test(info.aaguid) ? null : info.aaguid,
  }
}

/** Checks an assertion by the stored credential; the authenticator's new signature counter. */
export async function verifyRequest(rp: WebAuthnSettings, state: CeremonyState, credential: StoredCredential, response: AuthenticationResponseJSON): Promise<number> {
  const result = await checked(() =>
    verifyAuthenticationResponse({
      response,
      ...expectations(rp, state),
      credential: {
        id: credential.id,
        publicKey: new Uint8Array(Buffer.from(credential.public_key, 'base64url')),
        counter: credential.sign_count,
        transports: credential.transports as AuthenticatorTransport[],
      },
    }),
  )
  if (!result.verified) throw new CeremonyRefused('the assertion was not verified')
  return result.authenticationInfo.newCounter
}

/**
 * The shape check GoTrue's protocol.Parse*ResponseBody makes before any
 * cryptography: `{id, rawId, type:"public-key", response:{...}}` with the
 * members of its kind as base64url strings. False: "Invalid credential_response".
 */
export function wellFormedResponse(type: CeremonyState['type'], value: Record<string, unknown>): boolean {
  const b64url = (v: unknown) => typeof v === 'string' && v.length > 0 && /^[A-Za-z0-9_-]+={0,2}$/.test(v)
  if (!b64url(value.id) || !b64url(value.rawId) || value.type !== 'public-key') return false
  const response = value.response
  if (typeof response !== 'object' || response === null || Array.isArray(response)) return false
  const r = response as Record<string, unknown>
  if (!b64url(r.clientDataJSON)) return false
  if (type === 'create') return b64url(r.attestationObject)
  return b64url(r.authenticatorData) && b64url(r.signature) && (r.userHandle === undefined || r.userHandle === null || typeof r.userHandle === 'string')
}
