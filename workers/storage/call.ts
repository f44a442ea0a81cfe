// One Storage request as its handlers see it: the project, the caller, the
// databases, the byte store, and how an answer is made (JSON, or a body
// streamed back to the data plane's thread through the reply port).
import type { Readable } from 'node:stream'
import { readJsonObject, type JsonObject } from '../../lib/http/body.ts'
import { receiveFromPort, sendToPort } from '../../lib/port-stream.ts'
import type { RequestIdentity } from '../../lib/roles.ts'
import type { ServiceRequest, ServiceResponse, StorageProjectContext } from '../../lib/service.ts'
import type { BlobStore } from './blob-store.ts'
import type { StorageDatabase } from './database.ts'
import { storageErrors } from './errors.ts'

export interface StorageCall {
  request: ServiceRequest<StorageProjectContext>
  project: StorageProjectContext
  database: StorageDatabase
  store: BlobStore
  params: Record<string, string>
  query: URLSearchParams
}

const ANON: RequestIdentity = Object.freeze({ role: 'anon', claims: Object.freeze({ role: 'anon' }) })

/** Who the statements run as: the verified caller, or anon on a route opened without a key. */
export function callerOf(call: StorageCall): RequestIdentity {
  return call.request.identity ?? ANON
}

/** The caller's `sub` (an object's owner_id), and as a uuid when it is one (its `owner`). */
export function ownerOf(identity: RequestIdentity | undefined): { ownerId: string | null; owner: string | null } {
  const sub = identity?.claims.sub
  if (typeof sub !== 'string' || sub === '') return { ownerId: null, owner: null }
  return { ownerId: sub, owner: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(sub) ? sub : null }
}

export function jsonBody(call: StorageCall): JsonObject {
  return readJsonObject(call.request.body, { invalid: (detail) => storageErrors.invalidRequest(`Body is not valid JSON: ${detail}`) })
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): ServiceResponse {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }
}

/** The request's body as it arrives (routes the manifest streams), or its text for a body that was read whole. */
export function bodyOf(call: StorageCall): AsyncIterable<Uint8Array> {
  const port = call.request.bodyPort
  if (port !== undefined) return receiveFromPort(port)
  const text = call.request.body
  return (async function* () {
    if (text.length > 0) yield Buffer.from(text, 'latin1')
  })()
}

/** An answer whose body is `stream`, sent chunk by chunk as the client takes it; `length` goes out as Content-Length. */
export function streamed(call: StorageCall, status: number, headers: Record<string, string>, stream: Readable | AsyncIterable<Uint8Array>, length: number | undefined): ServiceResponse {
  const port = call.request.replyPort
  if (port === undefined) throw new Error('this request has no reply port (the manifest streams Storage\'s answers)')
  void sendToPort(stream as AsyncIterable<Uint8Array>, port).finally(() => {
    ;(stream as Readable).destroy?.()
  })
  return { status, headers, body: '', streamed: length === undefined ? {} : { length } }
}

/** Closes whichever port the handler did not use, so neither thread waits on it. */
export function closePorts(call: StorageCall, answer: ServiceResponse | undefined): void {
  call.request.bodyPort?.close()
  if (answer?.streamed === undefined) call.request.replyPort?.close()
}
