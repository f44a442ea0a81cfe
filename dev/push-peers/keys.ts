// Test keys: an APNs .p8 (PKCS#8 P-256) and a Google service-account file.
import crypto from 'node:crypto'

export interface ApnsKey {
  p8: string
  publicKey: crypto.KeyObject
  keyId: string
  teamId: string
}

export function makeApnsKey(keyId = 'KEY1234567', teamId = 'TEAM123456'): ApnsKey {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  return { p8: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey, keyId, teamId }
}

export interface ServiceAccountFile {
  type: 'service_account'
  project_id: string
  private_key_id: string
  private_key: string
  client_email: string
  client_id: string
  auth_uri: string
  token_uri: string
}

export function makeServiceAccount(projectId = 'demo-project-1234'): { file: ServiceAccountFile; publicKey: crypto.KeyObject } {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 })
  return {
    publicKey,
    file: {
      type: 'service_account',
      project_id: projectId,
      private_key_id: crypto.randomBytes(20).toString('hex'),
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      client_email: `push-sender@${projectId}.iam.gserviceaccount.com`,
      client_id: '1234567890',
      auth_uri: 'https://accounts.google.com/o/oauth2/auth',
      token_uri: 'https://oauth2.googleapis.com/token',
    },
  }
}

/** Splits and verifies a compact JWS; returns header and payload, or a reason it is bad. */
export function verifyJws(
  jwt: string,
  key: crypto.KeyObject,
  alg: 'ES256' | 'RS256',
): { ok: true; header: Record<string, unknown>; payload: Record<string, unknown> } | { ok: false; why: string } {
  const parts = jwt.split('.')
  if (parts.length !== 3) return { ok: false, why: 'not a JWS' }
  let header: Record<string, unknown>
  let payload: Record<string, unknown>
  try {
    header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString())
    payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString())
  } catch {
    return { ok: false, why: 'not JSON' }
  }
  if (header.alg !== alg) return { ok: false, why: `alg ${String(header.alg)}` }
  const signed = Buffer.from(`${parts[0]}.${parts[1]}`)
  const signature = Buffer.from(parts[2]!, 'base64url')
  const valid =
    alg === 'ES256'
      ? crypto.verify('sha256', signed, { key, dsaEncoding: 'ieee-p1363' }, signature)
      : crypto.verify('sha256', signed, key, signature)
  return valid ? { ok: true, header, payload } : { ok: false, why: 'bad signature' }
}
