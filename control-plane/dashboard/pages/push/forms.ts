// The Push tab's forms: store an Apple key or an Android service account
// (checked before storing, as PUT {base_url}/push/v1/credentials/apns|fcm
// checks them), remove a stored key, send a test notification to one device.
// Each calls control-plane/push-admin.ts. A refusal draws the page again with
// the error beside the field it names; the key material typed or chosen is
// never drawn back into the page.
import { BaseplaneError } from '../../../../lib/errors.ts'
import { removePushCredentials, sendTestNotification, setPushCredentials } from '../../../push-admin.ts'
import { refusable, type FormSpec, type FormState, type Saved } from '../../form-state.ts'
import { projectForm, type DashboardContext, type DashboardForm, type FormInput, type FormsPart } from '../../module.ts'
import { NAMES, pushScreen } from './screen.ts'
import { getProject } from '../../../projects.ts'

const pushPath = (input: FormInput) => `/projects/${input.params.ref!}/push`

/**
 * What the operator can act on that the operation reports as absent or
 * unreachable (a device removed meanwhile, keys already removed, Google's
 * token endpoint down): shown beside the form, not as an error page.
 */
function asRefusal(error: unknown): unknown {
  if (!BaseplaneError.is(error)) return error
  if ((error.status === 404 && error.code !== 'project_not_found') || error.code === 'token_endpoint_unreachable') {
    return new BaseplaneError(error.code, error.message, 409).concerning(error.field)
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

async function storeApns(context: DashboardContext, input: FormInput): Promise<Saved> {
  const stored = await refusing(() =>
    setPushCredentials(context.controlPlane, input.params.ref!, 'apns', {
      topic: input.field('topic'),
      key_id: input.field('key_id'),
      team_id: input.field('team_id'),
      environment: input.field('environment') || undefined,
      keys: [{ p8: input.field('p8') }],
    }),
  )
  return { to: pushPath(input), notice: 'push_apns_stored', values: [stored.key_id, stored.topic] }
}

async function storeFcm(context: DashboardContext, input: FormInput): Promise<Saved> {
  const text = input.field('service_account')
  if (text.trim() === '') throw new BaseplaneError('invalid_service_account', 'Choose the service-account file (or paste its JSON)', 400).concerning('service_account')
  const stored = await refusing(() => setPushCredentials(context.controlPlane, input.params.ref!, 'fcm', text, context.push))
  return { to: pushPath(input), notice: 'push_fcm_stored', values: [stored.project_id] }
}

async function removeKey(context: DashboardContext, input: FormInput): Promise<Saved> {
  await refusing(() => removePushCredentials(context.controlPlane, input.params.ref!, input.params.provider!))
  return { to: pushPath(input), notice: 'push_key_removed', values: [input.params.provider!] }
}

async function sendTest(context: DashboardContext, input: FormInput): Promise<Saved> {
  const sent = await refusing(() => sendTestNotification(context.controlPlane, input.params.ref!, input.params.device!))
  return { to: pushPath(input), notice: 'push_test_sent', values: [sent.device_id] }
}

export function pushForms(context: DashboardContext): FormsPart {
  const screen = async (input: FormInput, state: FormState) => pushScreen(context, await getProject(context.controlPlane, input.params.ref!), new URLSearchParams(), state)
  const form = (rest: string, spec: Omit<FormSpec, 'screen' | 'run'>, run: (context: DashboardContext, input: FormInput) => Promise<Saved>, where?: Record<string, string>): DashboardForm =>
    projectForm(rest, refusable({ ...spec, run: (input) => run(context, input), screen }), where)
  return {
    forms: [
      // The key itself is not drawn back; the API's `keys` is the form's p8.
      form('/push/apns', { form: 'apns', fields: ['topic', 'key_id', 'team_id', 'environment'], secret: ['p8'], names: { keys: 'p8' } }, storeApns),
      form('/push/fcm', { form: 'fcm', secret: ['service_account'] }, storeFcm),
      form('/push/:provider/remove', { form: (input) => `remove-${input.params.provider!}` }, removeKey, { provider: 'apns|fcm' }),
      form('/push/devices/:device/test', { form: 'test' }, sendTest, { device: '[0-9a-fA-F-]{36}' }),
    ],
    notices: {
      push_apns_stored: ([keyId, topic]) =>
        `Apple key ${keyId} for ${topic} checked and stored. Sending to Apple devices uses it from the next delivery (deliveries held by a stop go out now).`,
      push_fcm_stored: ([project]) =>
        `Service account of Firebase project ${project} checked (it obtained a token) and stored. Sending to Android devices uses it from the next delivery.`,
      push_key_removed: ([provider]) => {
        const name = NAMES[provider as keyof typeof NAMES] ?? provider
        return `The ${name} key was removed. Nothing is sent through ${name} until a new one is stored.`
      },
      push_test_sent: ([device]) => `Test notification queued for device ${device}. Its outcome appears in the delivery log below once the provider answers.`,
    },
  }
}
