// Password rules and hashing. bcrypt at cost 10, synchronously: this runs in
// an auth worker thread (one task at a time), never on the data plane's main
// thread, and the sync call keeps hashing on exactly the pool's threads.
import bcrypt from 'bcrypt'
import { authErrors } from './errors.ts'
import type { AuthSettings } from './settings.ts'

export const BCRYPT_COST = 10

// Compared against when the user does not exist, so an unknown address costs
// the same time as a wrong password.
const DUMMY_HASH = bcrypt.hashSync('baseplane-no-such-user', BCRYPT_COST)

/** GoTrue's checks, in its order: empty, too long, too short. */
export function checkNewPassword(password: string | undefined, settings: AuthSettings, emptyMessage = 'Signup requires a valid password'): string {
  if (password === undefined || password === '') throw authErrors.validation(emptyMessage).concerning('password')
  if (Buffer.byteLength(password) > 72) throw authErrors.validation('Password cannot be longer than 72 characters').concerning('password')
  if ([...password].length < settings.passwordMinLength) {
    throw authErrors.weakPassword(`Password should be at least ${settings.passwordMinLength} characters.`, ['length'])
  }
  return password
}

export function hashPassword(password: string): string {
  return bcrypt.hashSync(password, BCRYPT_COST)
}

export function passwordMatches(password: string, hash: string | null): boolean {
  if (!hash) {
    bcrypt.compareSync(password, DUMMY_HASH)
    return false
  }
  return bcrypt.compareSync(password, hash)
}
