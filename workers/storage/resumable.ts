// TUS resumable uploads (`/upload/resumable`): filled in with @tus/server.
import type { ServiceResponse } from '../../lib/service.ts'
import type { StorageCall } from './call.ts'
import { storageErrors } from './errors.ts'

export async function resumable(call: StorageCall): Promise<ServiceResponse> {
  throw storageErrors.notFound(call.request.method, call.request.path)
}
