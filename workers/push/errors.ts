// The push service's error catalogue: every error the HTTP API answers with,
// by stable snake_case code and HTTP status. Body shape: {"code", "message"}
// plus "hint" when there is something to do about it.
import { RETRY_AFTER_SECONDS } from '../../lib/db/database-errors.ts'
import { BaseplaneError } from '../../lib/errors.ts'

const error = (code: string, status: number, message: string, hint?: string, retryAfter?: number) => new BaseplaneError(code, message, status, hint, retryAfter)

export const pushErrors = {
  notFound: (method: string, path: string) => error('not_found', 404, `No push endpoint ${method} ${path || '/'}`),
  methodNotAllowed: (method: string, path: string, allowed: string[]) =>
    error('method_not_allowed', 405, `${method} is not allowed on ${path}; use ${allowed.join(' or ')}`),
  invalidJson: () => error('invalid_json', 400, 'The request body is not valid JSON'),
  /** `field`: the request field the refusal concerns, when it concerns one. */
  validation: (message: string, field?: string) => error('validation_failed', 400, message).concerning(field),
  apikeyRequired: () => error('no_api_key', 401, 'Send the project\'s anon or service_role key in the apikey header'),
  serviceRoleRequired: () =>
    error('service_role_required', 403, 'Only the service_role key may do this', 'Send the service_role key in the apikey header, from a server.'),
  userTokenRequired: () =>
    error('user_token_required', 401, 'Registering a device needs a signed-in user', 'Send the user\'s access token in Authorization: Bearer, or use the service_role key with user_id.'),
  sendNotAllowed: () =>
    error(
      'send_not_allowed',
      403,
      'No row-level security policy on push.messages allows this caller to send this message',
      'With no policy only the service_role key can send; add an insert policy on push.messages for other callers.',
    ),
  deviceNotAllowed: () => error('device_not_allowed', 403, 'Row-level security on push.devices does not allow this device row for this caller'),
  sendAtNotOnPlan: (message: string, hint: string | undefined) => error('send_at_not_available', 403, message, hint),
  /** Past the push deliveries cap (sql/push/0003): nothing of the send was queued. */
  quotaExceeded: (message: string) => error('quota_exceeded', 403, message, 'Nothing of this send was queued.'),
  deviceNotFound: (id: string) => error('device_not_found', 404, `No device ${id} visible to this caller`),
  deviceInactive: (id: string, reason: string | null) =>
    error('device_inactive', 409, `Device ${id} is deactivated${reason ? ` (${reason})` : ''}`, 'The app registers its token again when it next starts; nothing is sent to a deactivated device.'),
  messageNotFound: (id: string) => error('message_not_found', 404, `No message ${id} visible to this caller`),
  credentialsNotFound: (platform: string) => error('credentials_not_found', 404, `No ${platform} credentials are set`),
  invalidApnsKey: (reason: string) =>
    error('invalid_apns_key', 400, `The APNs key is not usable: ${reason}`, 'Upload the .p8 file of a key with Apple Push Notifications enabled, as downloaded.').concerning('keys'),
  invalidServiceAccount: (reason: string) =>
    error('invalid_service_account', 400, `The service account is not usable: ${reason}`, 'Upload the private-key JSON file of a service account of your Firebase project.'),
  serviceAccountRefused: (reason: string) =>
    error('service_account_refused', 400, `The service account did not obtain an access token: ${reason}`, 'Check that the key is current and not deleted in the Google Cloud console.'),
  tokenEndpointUnreachable: (reason: string) =>
    error('token_endpoint_unreachable', 502, `The OAuth token endpoint could not be reached to check the service account: ${reason}`),
  pushNotInstalled: () =>
    error('push_not_installed', 503, 'Push is not installed in this project\'s database', 'Enable it with: baseplane products enable push <ref>'),
  databaseUnavailable: () => error('database_unavailable', 503, 'The project database is unavailable', undefined, RETRY_AFTER_SECONDS),
  requestTimeout: () =>
    error('request_timeout', 504, 'The request took longer than the project\'s statement timeout allows and was cancelled'),
  internal: () => error('unexpected_failure', 500, 'Unexpected failure, please check server logs for more information'),
}
