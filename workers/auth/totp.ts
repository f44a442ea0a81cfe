// TOTP (RFC 6238) with otplib: 20-byte secrets in base32, SHA-1, six digits,
// 30-second steps (SPEC 8.4), the otpauth:// URI and its QR code as raw SVG,
// as GoTrue's enrolment returns them (pquerna/otp, goqrsvg at level H).
import { generateSecret, verifySync } from 'otplib'
import QRCode from 'qrcode'

export const TOTP_PERIOD_SECONDS = 30
export const TOTP_DIGITS = 6

export function newTotpSecret(): string {
  return generateSecret({ length: 20 })
}

/**
 * The key URI authenticator apps read: `otpauth://totp/<issuer>:<account>?algorithm=SHA1&digits=6&issuer=<issuer>&period=30&secret=<secret>`
 * (GoTrue's key.URL(), parameters in the same order).
 */
export function totpUri(issuer: string, account: string, secret: string): string {
  const query = new URLSearchParams({ algorithm: 'SHA1', digits: String(TOTP_DIGITS), issuer, period: String(TOTP_PERIOD_SECONDS), secret })
  return `otpauth://totp/${encodeURIComponent(issuer)}:${encodeURIComponent(account)}?${query.toString().replace(/\+/g, '%20')}`
}

/** The URI as a QR code, an SVG document (auth-js turns it into a data: URL itself). */
export function qrSvg(uri: string): Promise<string> {
  return QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'H', margin: 4 })
}

/**
 * The time step a code belongs to, or undefined when it is wrong. The step
 * before and after the current one are accepted (GoTrue: Skew 1), so a
 * clock a little off still works; the caller refuses steps already used.
 */
export function totpTimeStep(secret: string, code: string, nowSeconds = Date.now() / 1000): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined
  try {
    const epoch = Math.floor(nowSeconds)
    const result = verifySync({ secret, token: code, epoch, epochTolerance: TOTP_PERIOD_SECONDS })
    if (!result.valid) return undefined
    return 'timeStep' in result ? result.timeStep : Math.floor(epoch / TOTP_PERIOD_SECONDS) + result.delta
  } catch {
    return undefined
  }
}
