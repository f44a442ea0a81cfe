// Image transformations (`/render/image/...`): filled in with image-transform.ts.
import type { ServiceResponse } from '../../lib/service.ts'
import type { StorageCall } from './call.ts'
import { storageErrors } from './errors.ts'

export async function render(call: StorageCall, _access: 'authenticated' | 'public' | 'sign'): Promise<ServiceResponse> {
  throw storageErrors.featureNotEnabled('Image transformation', call.project.plan)
}
