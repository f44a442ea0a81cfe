// Auth concern's Piscina task: answers {base_url}/auth/v1/*.
import type { ServiceHandler, ServiceRequest, ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'

const handle: ServiceHandler = async (request: ServiceRequest): Promise<ServiceResponse> => {
  if (request.method === 'GET' && request.path === '/health') {
    return json(200, { version: '0.6.0', name: 'Baseplane Auth', description: 'Baseplane Auth is a GoTrue-compatible user and session API' })
  }
  return json(404, { code: 404, error_code: 'not_found', msg: 'Not found' }, { 'x-sb-error-code': 'not_found' })
}

export default handle
