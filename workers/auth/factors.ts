import type { ServiceResponse } from '../../lib/service.ts'
import { authErrors } from './errors.ts'
import type { AuthRequest } from './request.ts'
export async function enrollFactor(_req: AuthRequest): Promise<ServiceResponse> { throw authErrors.notFound() }
export async function challengeFactor(_req: AuthRequest, _id: string): Promise<ServiceResponse> { throw authErrors.notFound() }
export async function verifyFactor(_req: AuthRequest, _id: string): Promise<ServiceResponse> { throw authErrors.notFound() }
export async function deleteFactor(_req: AuthRequest, _id: string): Promise<ServiceResponse> { throw authErrors.notFound() }
