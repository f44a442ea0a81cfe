// The Storage tab's forms: make a bucket, save a bucket's settings (checked as
// POST/PUT /storage/v1/bucket check them, against the plan), remove an object
// (its row, then its bytes); and the upload's call, which answers a signed
// upload URL of the project's endpoint for the one name asked for, to which
// the page's script sends the file itself. Each calls
// control-plane/storage-admin.ts, as the CLI and the admin API do. A refusal
// draws the page again with the error beside the field it names.
import { BaseplaneError } from '../../../../lib/errors.ts'
import { createStorageBucket, removeStorageObject, signedUploadUrl, updateStorageBucket, type BucketInput } from '../../../storage-admin.ts'
import { getProject } from '../../../projects.ts'
import { keysView } from '../../../views.ts'
import { refusable, type FormSpec, type FormState, type Saved } from '../../form-state.ts'
import { projectCall, projectForm, type CallInput, type DashboardContext, type DashboardForm, type FormInput, type FormsPart } from '../../module.ts'
import { storageScreen } from './screen.ts'

/** The tab's path (under /dashboard) for a bucket's folder. */
function storagePath(ref: string, bucket?: string, prefix = ''): string {
  if (bucket === undefined) return `/projects/${ref}/storage`
  const query = new URLSearchParams({ bucket })
  if (prefix !== '') query.set('prefix', prefix)
  return `/projects/${ref}/storage?${query}`
}

/** The settings as the form gives them: an empty limit or type list is none (the plan's limit, any type). */
function settingsInput(input: FormInput): BucketInput {
  const limit = input.field('file_size_limit').trim()
  const types = input
    .field('allowed_mime_types')
    .split(',')
    .map((type) => type.trim())
    .filter((type) => type !== '')
  return {
    public: input.field('public') === 'on',
    file_size_limit: limit === '' ? null : /^\d+$/.test(limit) ? Number(limit) : limit,
    allowed_mime_types: types.length === 0 ? null : types,
  }
}

/** What the operator can act on that the operation reports as absent (an object removed meanwhile): shown beside the form, not as an error page. */
async function refusing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (BaseplaneError.is(error) && error.status === 404 && error.code !== 'project_not_found') throw new BaseplaneError(error.code, error.message, 409).concerning(error.field)
    throw error
  }
}

async function makeBucket(context: DashboardContext, input: FormInput): Promise<Saved> {
  const ref = input.params.ref!
  const made = await createStorageBucket(context.controlPlane, ref, input.field('bucket').trim(), settingsInput(input))
  return { to: storagePath(ref, made.id), notice: 'storage_bucket_made', values: [made.id] }
}

async function saveSettings(context: DashboardContext, input: FormInput): Promise<Saved> {
  const ref = input.params.ref!
  const saved = await refusing(() => updateStorageBucket(context.controlPlane, ref, input.field('bucket'), settingsInput(input)))
  return { to: storagePath(ref, saved.id), notice: 'storage_bucket_saved', values: [saved.id] }
}

async function removeObject(context: DashboardContext, input: FormInput): Promise<Saved> {
  const ref = input.params.ref!
  const bucket = input.field('bucket')
  await refusing(() => removeStorageObject(context.controlPlane, ref, bucket, input.field('key')))
  return { to: storagePath(ref, bucket, input.field('prefix')), notice: 'storage_object_removed' }
}

/** The upload's signed URL: `{bucket, key, upsert}` from the page's script, answered `{url}` or the refusal with its field. */
async function uploadUrl(context: DashboardContext, ref: string, { body }: CallInput): Promise<[number, unknown]> {
  const input = (body ?? {}) as { bucket?: unknown; key?: unknown; upsert?: unknown }
  if (typeof input.bucket !== 'string' || typeof input.key !== 'string' || input.key === '') {
    return [400, { code: 'invalid_argument', message: 'Choose a file (and a name for it) to upload', field: 'name' }]
  }
  const project = await getProject(context.controlPlane, ref)
  const baseUrl = keysView(project, context.addressing).base_url
  try {
    return [200, await signedUploadUrl(context.controlPlane, ref, baseUrl, input.bucket, input.key, input.upsert === true)]
  } catch (error) {
    if (BaseplaneError.is(error) && error.status < 500 && error.code !== 'project_not_found') return [error.status, { code: error.code, message: error.message, field: error.field }]
    throw error
  }
}

export function storageForms(context: DashboardContext): FormsPart {
  const form = (rest: string, spec: Omit<FormSpec, 'screen' | 'run'>, run: (context: DashboardContext, input: FormInput) => Promise<Saved>, browsed: (input: FormInput) => URLSearchParams): DashboardForm =>
    projectForm(
      rest,
      refusable({
        ...spec,
        run: (input) => run(context, input),
        screen: async (input: FormInput, state: FormState) => storageScreen(context, await getProject(context.controlPlane, input.params.ref!), browsed(input), state),
      }),
    )
  const inBucket = (input: FormInput) => new URLSearchParams({ bucket: input.field('bucket'), prefix: input.field('prefix') })
  const settings = ['public', 'file_size_limit', 'allowed_mime_types']
  return {
    forms: [
      form('/storage/buckets', { form: 'bucket_new', fields: ['bucket', ...settings] }, makeBucket, () => new URLSearchParams()),
      form('/storage/settings', { form: 'bucket_settings', fields: settings }, saveSettings, inBucket),
      form('/storage/remove', { form: 'remove' }, removeObject, inBucket),
    ],
    calls: [projectCall('POST', '/storage/upload-url', (ref, input) => uploadUrl(context, ref, input))],
    notices: {
      storage_bucket_made: ([bucket]) => `Bucket ${bucket} made. The project's policies decide who may use it through the API; the service role always may.`,
      storage_bucket_saved: ([bucket]) => `Settings of bucket ${bucket} saved. They apply from the next upload.`,
      storage_object_removed: () => 'The object was removed, and its bytes with it.',
      storage_uploaded: () => 'The file was uploaded.',
    },
  }
}
