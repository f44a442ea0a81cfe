// The helper's one error class. It runs in browsers and in apps that do not
// load the platform, so it does not share lib/errors.ts; it keeps the same
// `{code, message}` shape and a stable code per mistake.

export type CookieErrorCode = 'invalid_cookie_option' | 'invalid_cookie_name' | 'invalid_supabase_url' | 'no_document'

export class CookieError extends Error {
  readonly code: CookieErrorCode

  constructor(code: CookieErrorCode, message: string) {
    super(message)
    this.name = 'CookieError'
    this.code = code
  }

  toJSON(): { code: CookieErrorCode; message: string } {
    return { code: this.code, message: this.message }
  }
}
