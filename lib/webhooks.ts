// Standard Webhooks (https://www.standardwebhooks.com/), the one
// implementation: Auth's send email hook (workers/auth/hooks/send-email.ts)
// and the operator webhook (control-plane/event-outbox.ts) sign with it.
// A message is signed as `id.timestamp.body` with HMAC-SHA256 under each
// secret, and carries webhook-id, webhook-timestamp and webhook-signature.
import crypto from 'node:crypto'

/** A secret as Standard Webhooks writes it, `whsec_<base64>`, or GoTrue's `v1,whsec_<base64>`. */
const SECRET = /^(?:v1,)?whsec_([A-Za-z0-9+/]+={0,2})$/

/** The fewest bytes a secret may have (Standard Webhooks asks for 24 to 64; GoTrue accepts 16). */
export const MIN_SECRET_BYTES = 16

/** The key bytes of a written secret; undefined when it is not one (or is shorter than MIN_SECRET_BYTES). */
export function webhookSecretBytes(text: string): Buffer | undefined {
  const match = SECRET.exec(text.trim())
  const bytes = match ? Buffer.from(match[1]!, 'base64') : undefined
  return bytes !== undefined && bytes.length >= MIN_SECRET_BYTES ? bytes : undefined
}

/** Standard Webhooks signatures of `id.timestamp.body`: one `v1,<base64 HMAC-SHA256>` per secret, joined by ", " (GoTrue). */
export function webhookSignature(secrets: readonly Buffer[], id: string, timestamp: number, body: string): string {
  return secrets.map((secret) => `v1,${crypto.createHmac('sha256', secret).update(`${id}.${timestamp}.${body}`).digest('base64')}`).join(', ')
}

/**
 * The three headers of a signed message. `id` stays the same across retries
 * of one message (receivers deduplicate by it); `timestamp` is the attempt's,
 * in seconds, so receivers can refuse replays of old attempts.
 */
export function signedWebhookHeaders(secrets: readonly Buffer[], id: string, timestamp: number, body: string): Record<string, string> {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': webhookSignature(secrets, id, timestamp, body) }
}
