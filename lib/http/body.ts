// The one body reader: JSON bodies and typed field readers. The size limit is
// enforced while the bytes arrive (MAX_BODY_BYTES, read by both servers), so
// a body reaching here is already within it. Each caller passes its own
// catalogue's errors, since GoTrue, pg_graphql, Push and the platform word a
// bad body differently.

/** The largest request body the data plane reads (413 request_too_large beyond it). */
export const MAX_BODY_BYTES = 1024 * 1024

/** The media whose body is bytes, not text (bodyText). */
export const OCTET_STREAM = 'application/octet-stream'

/** A Content-Type's media type without its parameters, lower-cased ("" when none is given). */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase()
}

/**
 * A body's bytes as the text a concern is given: UTF-8, but an
 * `application/octet-stream` body byte for byte (latin1: one character per
 * byte, 0 to 255), so bytes that are not UTF-8 reach a concern intact (the
 * data API passes them to a `bytea` parameter). Both HTTP engines read
 * bodies through it.
 */
export function bodyText(bytes: Buffer, contentType: string | undefined): string {
  return bytes.toString(mediaTypeOf(contentType) === OCTET_STREAM ? 'latin1' : 'utf8')
}

export type JsonObject = Record<string, unknown>

export interface BodyErrors {
  /** The text is not JSON; `detail` is the parser's own sentence. */
  invalid: (detail: string) => Error
  /** JSON, but not an object; without it, `invalid` answers. */
  notObject?: () => Error
  /** The body is blank; without it, a blank body reads as {}. */
  empty?: () => Error
}

/** Any JSON value (Push validates the shape itself, field by field). */
export function readJson(text: string, errors: BodyErrors): unknown {
  if (text.trim() === '') {
    if (errors.empty) throw errors.empty()
    return {}
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    throw errors.invalid((error as Error).message)
  }
}

/** A JSON object body; arrays, strings and null are refused. */
export function readJsonObject(text: string, errors: BodyErrors): JsonObject {
  const value = readJson(text, errors)
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw errors.notObject ? errors.notObject() : errors.invalid('the body must be a JSON object')
  }
  return value as JsonObject
}

/**
 * Typed readers over a parsed body. A null counts as absent (clients send
 * `"plan": null` to mean "unset"); messages name the field.
 */
export function fieldsOf(body: JsonObject, refuse: (message: string) => Error) {
  function read<T>(name: string, type: 'string' | 'number' | 'boolean', required: boolean): T | undefined {
    const value = body[name]
    if (value === undefined || value === null) {
      if (required) throw refuse(`"${name}" is required`)
      return undefined
    }
    if (typeof value !== type) throw refuse(`"${name}" must be a ${type}`)
    return value as T
  }
  return {
    string: (name: string) => read<string>(name, 'string', true)!,
    optionalString: (name: string) => read<string>(name, 'string', false),
    number: (name: string) => read<number>(name, 'number', true)!,
    optionalNumber: (name: string) => read<number>(name, 'number', false),
    boolean: (name: string) => read<boolean>(name, 'boolean', true)!,
    optionalBoolean: (name: string) => read<boolean>(name, 'boolean', false),
  }
}
