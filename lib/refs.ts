// A project's ref: its database's name, its host label and its path segment,
// so it is lower-case letters and digits, starting with a letter (the
// catalogue's check constraint says the same).

/** The pattern's source, for routes that capture a ref inside a longer path. */
export const REF_SOURCE = '[a-z][a-z0-9]{2,39}'

export const REF_PATTERN = new RegExp(`^${REF_SOURCE}$`)

/** A project ref in a route's path (`/projects/:ref`): the admin API's and the dashboard's `where`. */
export const REF_PARAM = { ref: REF_SOURCE } as const

export function isRef(value: string): boolean {
  return REF_PATTERN.test(value)
}
