// Storage's errors, in Supabase Storage's words and shape:
// `{statusCode, code, error, message}`. Supabase answers several of them with
// HTTP 400 while the body's statusCode says what they are ("404" for a missing
// object, "403" for a policy's refusal): storage-js and the apps built on it
// read the body, so the same pair is kept here.
import { BaseplaneError, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../lib/errors.ts'
import type { OutgoingResponse } from '../../lib/http.ts'
import { refusalResponse } from '../../lib/http/errors.ts'

const BRAND = Symbol.for('baseplane.storage.error')

export class StorageApiError extends BaseplaneError {
  /** The body's `statusCode` (a string in Supabase's shape), which may differ from the HTTP status. */
  readonly bodyStatus: string
  /** The body's `error`: Supabase's short name of the failure. */
  readonly errorName: string
  readonly [BRAND] = true

  constructor(code: string, errorName: string, message: string, status: number, bodyStatus: number = status, retryAfter?: number) {
    super(code, message, status, undefined, retryAfter)
    this.name = 'StorageApiError'
    this.bodyStatus = String(bodyStatus)
    this.errorName = errorName
  }

  static isStorage(error: unknown): error is StorageApiError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[BRAND] === true
  }
}

export const storageErrors = {
  noSuchBucket: () => new StorageApiError('NoSuchBucket', 'Bucket not found', 'Bucket not found', 400, 404),
  noSuchKey: () => new StorageApiError('NoSuchKey', 'not_found', 'Object not found', 400, 404),
  noSuchUpload: () => new StorageApiError('NoSuchUpload', 'not_found', 'Upload not found', 404),
  bucketExists: () => new StorageApiError('BucketAlreadyExists', 'Duplicate', 'The resource already exists', 409),
  keyExists: () => new StorageApiError('KeyAlreadyExists', 'Duplicate', 'The resource already exists', 409),
  bucketNotEmpty: () => new StorageApiError('InvalidRequest', 'Bucket not empty', 'The bucket you tried to delete is not empty', 409),
  /** A policy refused the caller (an insert's check, or rows it may not see); Supabase's famous 400 with statusCode 403. */
  accessDenied: (message = 'new row violates row-level security policy') => new StorageApiError('AccessDenied', 'Unauthorized', message, 400, 403),
  entityTooLarge: () => new StorageApiError('EntityTooLarge', 'Payload too large', 'The object exceeded the maximum allowed size', 413),
  invalidMimeType: (type: string) => new StorageApiError('InvalidMimeType', 'invalid_mime_type', `mime type ${type} is not supported`, 415),
  invalidKey: (key: string) => new StorageApiError('InvalidKey', 'Invalid Input', `Invalid key: ${key}`, 400),
  invalidBucketName: (name: string) => new StorageApiError('InvalidBucketName', 'Invalid Input', `Bucket name invalid: ${name}`, 400),
  invalidRequest: (message: string) => new StorageApiError('InvalidRequest', 'Invalid Input', message, 400),
  invalidRange: () => new StorageApiError('InvalidRange', 'invalid_range', 'The requested range is not satisfiable', 416),
  invalidJwt: (message: string) => new StorageApiError('InvalidJWT', 'InvalidJWT', message, 400),
  invalidSignature: () => new StorageApiError('InvalidSignature', 'InvalidSignature', 'The signature does not match the object', 400),
  missingToken: () => new StorageApiError('InvalidRequest', 'Invalid Input', 'querystring must have required property \'token\'', 400),
  /** The upload ended before its declared length, or its multipart form was cut or malformed. */
  truncated: (detail: string) => new StorageApiError('InvalidRequest', 'Invalid Input', `The upload was incomplete: ${detail}`, 400),
  uploadStalled: (idleMs: number) => new StorageApiError('RequestTimeout', 'Request Timeout', `The upload sent nothing for ${idleMs / 1000} s and was given up`, 408),
  featureNotEnabled: (feature: string, plan: string) =>
    new StorageApiError('FeatureNotEnabled', 'Feature not enabled', `${feature} is not offered on the ${plan} plan`, 403),
  /** Past the project's storage size cap (lib/plans.ts): uploads refused, reads and deletes served. */
  quotaExceeded: (message: string) => new StorageApiError('quota_exceeded', 'Quota exceeded', message, 403),
  notFound: (method: string, path: string) => new StorageApiError('NotFound', 'Not Found', `Route ${method}:${path} not found`, 404),
  methodNotAllowed: (method: string, path: string) => new StorageApiError('NotFound', 'Not Found', `Route ${method}:${path} not found`, 404),
  databaseUnavailable: () =>
    new StorageApiError('DatabaseError', 'Service Unavailable', 'The project database is unavailable; try again shortly', 503, 503, UNAVAILABLE_RETRY_AFTER_SECONDS),
  databaseTimeout: () => new StorageApiError('DatabaseTimeout', 'Timeout', 'The database statement took too long', 504),
  storeUnavailable: () =>
    new StorageApiError('StorageBackendError', 'Service Unavailable', 'The object store is unavailable; try again shortly', 503, 503, UNAVAILABLE_RETRY_AFTER_SECONDS),
  internal: () => new StorageApiError('InternalError', 'Internal', 'Internal Server Error', 500),
}

/** Any error in Storage's shape: a platform error's code doubles as its `error` (lib/http/errors.ts). */
export function storageErrorResponse(error: BaseplaneError): OutgoingResponse {
  if (!StorageApiError.isStorage(error)) return refusalResponse(error, 'storage', {})
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (error.retryAfter !== undefined) headers['retry-after'] = String(error.retryAfter)
  const body = { statusCode: error.bodyStatus, code: error.code, error: error.errorName, message: error.message }
  return { status: error.status, headers, body: JSON.stringify(body) }
}
