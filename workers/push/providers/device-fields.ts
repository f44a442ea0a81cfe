// Reading the fields of a device registration (POST /devices): the common
// string rule, and the Web Push subscription the browser serialises.
import net from 'node:net'
import { pushErrors } from '../errors.ts'

export interface DeviceOptions {
  /** Accept http:// Web Push endpoints (local test receivers); https only otherwise. */
  allowInsecureEndpoints: boolean
}

/** A device's address at its provider: the token (or endpoint) and Web Push's keys. */
export interface DeviceAddress {
  token: string
  p256dh: string | null
  auth: string | null
}

export function requiredField(value: unknown, field: string, max: number): string {
  if (typeof value !== 'string' || value.length === 0) throw pushErrors.validation(`${field} is required`)
  if (value.length > max) throw pushErrors.validation(`${field} is longer than ${max} characters`)
  return value
}

function isPrivateHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase()
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) return true
  if (net.isIPv6(host)) return host === '::1' || host === '::' || /^f[cd]/.test(host) || host.startsWith('fe80') || host.startsWith('::ffff:')
  if (!net.isIPv4(host)) return false
  const [a, b] = host.split('.').map(Number) as [number, number]
  return a === 10 || a === 127 || a === 0 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127)
}

/** A PushSubscription as the browser serialises it: {endpoint, keys: {p256dh, auth}}, nested or not. */
export function webSubscription(b: Record<string, unknown>, options: DeviceOptions): DeviceAddress {
  const sub = (b.subscription ?? b) as Record<string, unknown>
  const endpoint = requiredField(sub.endpoint ?? b.token, 'subscription.endpoint', 4096)
  let url: URL
  try {
    url = new URL(endpoint)
  } catch {
    throw pushErrors.validation('subscription.endpoint must be a URL')
  }
  if (url.protocol !== 'https:' && !(options.allowInsecureEndpoints && url.protocol === 'http:')) {
    throw pushErrors.validation('subscription.endpoint must be an https: URL')
  }
  // The platform POSTs to this URL: not to itself or a private network (push services have public names).
  if (!options.allowInsecureEndpoints && isPrivateHost(url.hostname)) {
    throw pushErrors.validation('subscription.endpoint must be a push service on the public internet')
  }
  const keys = (sub.keys ?? {}) as Record<string, unknown>
  const p256dh = requiredField(keys.p256dh, 'subscription.keys.p256dh', 200)
  const auth = requiredField(keys.auth, 'subscription.keys.auth', 100)
  if (Buffer.from(p256dh, 'base64url').length !== 65) throw pushErrors.validation('subscription.keys.p256dh must be a base64url P-256 public key (65 bytes)')
  if (Buffer.from(auth, 'base64url').length !== 16) throw pushErrors.validation('subscription.keys.auth must be a base64url 16-byte secret')
  return { token: endpoint, p256dh, auth }
}
