import type { ServiceResponse } from '../../lib/service.ts'
import { authErrors } from './errors.ts'
import type { AuthRequest } from './request.ts'
export async function authorize(_req: AuthRequest): Promise<ServiceResponse> { throw authErrors.providerDisabled() }
export async function callback(_req: AuthRequest): Promise<ServiceResponse> { throw authErrors.providerDisabled() }
