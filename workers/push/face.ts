// Push's face for the control plane and the CLI: the one module outside
// workers/push/ they may import (test/platform/layout.test.ts holds it). Each
// part is Push's own code, re-exported as is, so the operator's paths (CLI,
// dashboard, admin API) check and write exactly as the push API does:
//
// - Credentials: checking and storing APNs keys (the `.p8` must sign ES256)
//   and FCM service accounts (which must obtain a token from the token
//   endpoint), on a connection of their own to the project's database;
//   describing the stored ones (never the keys) and removing them, on the
//   caller's connection; `stopAdvice`, what an operator does about a provider
//   that stopped.
// - Installing: schema `push` and the project's VAPID key pair, when the
//   product is enabled or the project's database upgraded; the plan and the
//   deliveries cap the fan-out trigger reads, when either changes.
// - Messages: `parseMessage` checks one message as `POST /push/v1/messages`
//   does; `insertMessages` queues checked messages in `push.messages` on the
//   caller's transaction (as `service_role`, RLS applies), for the project's
//   sending actor.
// - Errors: Push's error catalogue (`pushErrors`), so the operator sees the
//   push API's codes.
//
// Everything else in workers/push/ (the handlers, the store's other SQL, the
// actors and providers) is Push's alone.

// Credentials
export {
  deleteCredentials,
  describeCredentials,
  setApnsCredentials,
  setFcmCredentials,
  type ApnsCredentialsSummary,
  type CredentialStatus,
  type FcmCredentialsSummary,
} from './credentials.ts'
export { stopAdvice } from './stop-advice.ts'

// Installing
export { installPushInto, pushDeliveriesCap, pushSettingsOf, syncPushSettings, type PushSettings } from './install.ts'

// Messages
export { parseMessage } from './api/messages.ts'
export { insertMessages, type MessageInput } from './store/messages.ts'

// Errors
export { pushErrors } from './errors.ts'
