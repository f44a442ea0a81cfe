// Email address checks (GoTrue: "Unable to validate email address: invalid format").
import { authErrors } from './errors.ts'

const EMAIL = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$/

/** The address lower-cased and trimmed; a validation error when it is not an address. */
export function normalizeEmail(value: string, status: 400 | 422 = 400): string {
  const email = value.trim().toLowerCase()
  if (email.length > 255 || !EMAIL.test(email)) {
    throw (status === 400 ? authErrors.validation('Unable to validate email address: invalid format') : authErrors.validation422('Invalid email format')).concerning('email')
  }
  return email
}
