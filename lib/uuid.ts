// A UUID as every API of the platform takes one: 8-4-4-4-12 hex digits, either
// case (GoTrue's uuid.FromString, PostgreSQL's uuid input).

/** The pattern's source, for routes that capture a UUID inside a longer path. */
export const UUID_SOURCE = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'

export const UUID_PATTERN = new RegExp(`^${UUID_SOURCE}$`, 'i')

/** Narrows an unknown value to a string; a string argument stays a string either way. */
export function isUuid(value: string): boolean
export function isUuid(value: unknown): value is string
export function isUuid(value: unknown): boolean {
  return typeof value === 'string' && UUID_PATTERN.test(value)
}
