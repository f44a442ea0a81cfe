// The Push tab's forms: store an Apple key or an Android service account
// (checked before storing, as PUT {base_url}/push/v1/credentials/apns|fcm
// checks them), remove a stored key, send a test notification to one device.
// Each calls control-plane/push-admin.ts. A refusal draws the page again with
// the error beside its field; the key material typed or chosen is never drawn
// back into the page.
import { BaseplaneError } from '../../lib/errors.ts'
import { REF_PARAM } from '../admin-api.ts'
import { removePushCredentials, sendTestNotification, setPushCredentials } from '../push-admin.ts'
import { attempt, type FormState } from './form-state.ts'
import type { DashboardContext, DashboardForm, FormInput, Screen } from './module.ts'

const NAMES: Record<string, string> = { apns: 'Apple (APNs)', fcm: 'Android (FCM)' }

/** Draws the Push tab of a project with a form's state. */
export type PushScreen = (ref: string, state: FormState) => Promise<Screen>

/**
 * What the operator can act on that the operation reports as absent or
 * unreachable (a device removed meanwhile, keys already removed, Google's
 * token endpoint down): shown beside the form, not as an error page.
 */
function asRefusal(error: unknown): unknown {
  if (!BaseplaneError.is(error)) return error
  if ((error.status === 404 && error.code !== 'project_not_found') || error.code === 'token_endpoint_unreachable') {
    return new BaseplaneError(error.code, error.message, 409)
  }
  return error
}

async function refusing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    throw asRefusal(error)
  }
}

/** The APNs form's field an error message is about (validateApns names the API's fields). */
function apnsField(message: string): string {
  const match = /^(topic|key_id|team_id|environment)\b/.exec(message)
  if (match) return match[1]!
  return /APNs key|keys\[|keys /.test(message) ? 'p8' : ''
}

export function pushForms(context: DashboardContext, screen: PushScreen): DashboardForm[] {
  const { controlPlane } = context
  const push = (ref: string) => `/projects/${ref}/push`
  const ref = (input: FormInput) => input.params.ref!
  return [
    {
      method: 'POST',
      path: '/projects/:ref/push/apns',
      where: REF_PARAM,
      form: (input) =>
        attempt(input, {
          form: 'apns',
          // The key itself is not drawn back.
          fields: ['topic', 'key_id', 'team_id', 'environment'],
          fieldOf: apnsField,
          run: async () => {
            const stored = await refusing(() =>
              setPushCredentials(controlPlane, ref(input), 'apns', {
                topic: input.field('topic'),
                key_id: input.field('key_id'),
                team_id: input.field('team_id'),
                environment: input.field('environment') || undefined,
                keys: [{ p8: input.field('p8') }],
              }),
            )
            return { to: push(ref(input)), notice: 'push_apns_stored', values: [stored.key_id, stored.topic] }
          },
          screen: (state) => screen(ref(input), state),
        }),
    },
    {
      method: 'POST',
      path: '/projects/:ref/push/fcm',
      where: REF_PARAM,
      form: (input) =>
        attempt(input, {
          form: 'fcm',
          fields: [],
          fieldOf: () => 'service_account',
          run: async () => {
            const text = input.field('service_account')
            if (text.trim() === '') throw new BaseplaneError('invalid_service_account', 'Choose the service-account file (or paste its JSON)', 400)
            const stored = await refusing(() => setPushCredentials(controlPlane, ref(input), 'fcm', text, context.push))
            return { to: push(ref(input)), notice: 'push_fcm_stored', values: [stored.project_id] }
          },
          screen: (state) => screen(ref(input), state),
        }),
    },
    {
      method: 'POST',
      path: '/projects/:ref/push/:provider/remove',
      where: { ...REF_PARAM, provider: 'apns|fcm' },
      form: (input) =>
        attempt(input, {
          form: `remove-${input.params.provider!}`,
          fields: [],
          run: async () => {
            await refusing(() => removePushCredentials(controlPlane, ref(input), input.params.provider!))
            return { to: push(ref(input)), notice: 'push_key_removed', values: [input.params.provider!] }
          },
          screen: (state) => screen(ref(input), state),
        }),
    },
    {
      method: 'POST',
      path: '/projects/:ref/push/devices/:device/test',
      where: { ...REF_PARAM, device: '[0-9a-fA-F-]{36}' },
      form: (input) =>
        attempt(input, {
          form: 'test',
          fields: [],
          run: async () => {
            const sent = await refusing(() => sendTestNotification(controlPlane, ref(input), input.params.device!))
            return { to: push(ref(input)), notice: 'push_test_sent', values: [sent.device_id] }
          },
          screen: (state) => screen(ref(input), state),
        }),
    },
  ]
}

export const pushNotices: Record<string, (values: string[]) => string> = {
  push_apns_stored: ([keyId, topic]) =>
    `Apple key ${keyId} for ${topic} checked and stored. Sending to Apple devices uses it from the next delivery (deliveries held by a stop go out now).`,
  push_fcm_stored: ([project]) =>
    `Service account of Firebase project ${project} checked (it obtained a token) and stored. Sending to Android devices uses it from the next delivery.`,
  push_key_removed: ([provider]) =>
    `The ${NAMES[provider!] ?? provider} key was removed. Nothing is sent through ${NAMES[provider!] ?? provider} until a new one is stored.`,
  push_test_sent: ([device]) => `Test notification queued for device ${device}. Its outcome appears in the delivery log below once the provider answers.`,
}
