// The project's Storage tab as drawn: the project's stored bytes, objects and
// buckets; the buckets (public, file size limit, allowed types, objects,
// size) with a form for a new one; a bucket browsed one folder level at a
// time (`?bucket=&prefix=&offset=`), each file with a download link (a signed
// URL of the project's own endpoint, valid an hour) and a removal, an upload
// (assets/storage.js: a signed upload URL from forms.ts, then the file PUT
// straight to the project's endpoint) and the bucket's settings; and the
// policies on storage.objects and storage.buckets, which are what decides
// access through the API. The data comes from control-plane/storage-admin.ts
// (shared with the CLI and the admin API); the forms are in forms.ts.
import type { ProjectRecord } from '../../../../lib/catalogue.ts'
import { BaseplaneError } from '../../../../lib/errors.ts'
import { signedDownloadUrl, storageOverview, type BucketSummary, type FolderPage, type StoragePolicy } from '../../../storage-admin.ts'
import { keysView } from '../../../views.ts'
import { NO_STATE, type FormState } from '../../form-state.ts'
import { empty, html, Safe, table } from '../../html.ts'
import { projectPage, type DashboardContext, type Screen, type ScreenPart } from '../../module.ts'
import { getProject } from '../../../projects.ts'

const PER_PAGE = 100
/** How long a download link drawn in the page works. */
export const DOWNLOAD_SECONDS = 3600

/** 1234567 -> "1.2 MB" (powers of 1024). */
export function size(value: number | null): string {
  if (value === null) return ''
  const units = ['bytes', 'kB', 'MB', 'GB', 'TB']
  let unit = 0
  let scaled = value
  while (scaled >= 1024 && unit < units.length - 1) {
    scaled /= 1024
    unit++
  }
  return unit === 0 ? `${value} bytes` : `${scaled.toFixed(1)} ${units[unit]}`
}

const count = (n: number) => n.toLocaleString('en')
const when = (value: string | null) => (value ? value.replace('T', ' ').replace(/\.\d+/, '').replace(/Z$/, ' UTC') : '')

/** The Storage tab's URL for a bucket's folder (the query's values encoded). */
export function browsePath(ref: string, bucket?: string, prefix = '', offset?: number): string {
  if (bucket === undefined) return `/dashboard/projects/${ref}/storage`
  const query = new URLSearchParams({ bucket })
  if (prefix !== '') query.set('prefix', prefix)
  if (offset !== undefined && offset > 0) query.set('offset', String(offset))
  return `/dashboard/projects/${ref}/storage?${query}`
}

const typesText = (types: string[] | null) => (types === null || types.length === 0 ? '' : types.join(', '))

function summarySection(ref: string, usage: { bytes: number; objects: number; buckets: number; plan_file_size_limit: number }, plan: string): Safe {
  return html`<section aria-labelledby="st-summary"><h2 id="st-summary">Storage</h2>
<p>Files under <code>{base_url}/storage/v1</code>, as Supabase Storage serves them (<code>supabase.storage</code>).</p>
${table(['', ''], [
  html`<tr><th scope="row">Stored</th><td id="st-bytes">${size(usage.bytes)}</td></tr>`,
  html`<tr><th scope="row">Objects</th><td id="st-objects">${count(usage.objects)}</td></tr>`,
  html`<tr><th scope="row">Buckets</th><td id="st-buckets">${count(usage.buckets)}</td></tr>`,
  html`<tr><th scope="row">Largest upload on the ${plan} plan</th><td>${size(usage.plan_file_size_limit)}</td></tr>`,
])}
<p class="muted">Stored is every byte the platform holds for the project, as its usage counts it; <code>baseplane storage usage ${ref}</code> prints it.</p></section>`
}

function bucketsSection(ref: string, buckets: BucketSummary[], chosen: string | undefined, state: FormState): Safe {
  const rows = buckets.map(
    (b) => html`<tr data-bucket="${b.id}"><td><a href="${browsePath(ref, b.id)}" ${b.id === chosen ? new Safe('aria-current="true"') : ''}>${b.name}</a></td><td>${b.public ? 'yes' : 'no'}</td>
<td>${b.file_size_limit === null ? html`<span class="muted">the plan's</span>` : size(b.file_size_limit)}</td><td>${typesText(b.allowed_mime_types) || html`<span class="muted">any</span>`}</td>
<td>${count(b.objects)}</td><td>${size(b.bytes)}</td></tr>`,
  )
  const list = rows.length === 0 ? empty('No buckets yet. Make one below, or with supabase.storage.createBucket() as the service role.') : table(['Bucket', 'Public', 'File size limit', 'Allowed types', 'Objects', 'Size'], rows)
  return html`<section aria-labelledby="st-buckets-h"><h2 id="st-buckets-h">Buckets</h2>
<div id="st-bucket-list">${list}</div>
<h3>New bucket</h3>
<form method="post" action="/dashboard/projects/${ref}/storage/buckets" id="st-new-bucket">
<label for="st-new-name">Name</label>
<input type="text" id="st-new-name" name="bucket" autocomplete="off" required value="${state.value('bucket_new', 'bucket', '')}" ${state.attrs('bucket_new', 'bucket')}>
${state.error('bucket_new', 'bucket')}
${settingsInputs('bucket_new', 'st-new', { public: false, file_size_limit: null, allowed_mime_types: null }, state)}
${state.error('bucket_new', '')}
<p><button class="secondary">Make bucket</button></p></form></section>`
}

/** The public switch, the size limit and the types of a bucket's form (`form`: the form's name for its errors). */
function settingsInputs(form: string, id: string, stored: Pick<BucketSummary, 'public' | 'file_size_limit' | 'allowed_mime_types'>, state: FormState): Safe {
  const isPublic = state.refusal?.form === form ? state.value(form, 'public', '') === 'on' : stored.public
  return html`<label class="check"><input type="checkbox" id="${id}-public" name="public" ${isPublic ? new Safe('checked') : ''}> Public: anyone may download its files by URL, without a key</label>
<label for="${id}-limit">File size limit (bytes, or a size such as <code>5MB</code>; empty for the plan's)</label>
<input type="text" id="${id}-limit" name="file_size_limit" autocomplete="off" value="${state.value(form, 'file_size_limit', stored.file_size_limit === null ? '' : String(stored.file_size_limit))}" ${state.attrs(form, 'file_size_limit')}>
${state.error(form, 'file_size_limit')}
<label for="${id}-types">Allowed types (media types separated by commas, such as <code>image/png, image/*</code>; empty for any)</label>
<input type="text" id="${id}-types" name="allowed_mime_types" autocomplete="off" value="${state.value(form, 'allowed_mime_types', typesText(stored.allowed_mime_types))}" ${state.attrs(form, 'allowed_mime_types')}>
${state.error(form, 'allowed_mime_types')}`
}

/** The folder's path as links: the bucket, then each folder down to the one shown. */
function crumbs(ref: string, bucket: string, prefix: string): Safe {
  const parts = prefix.split('/').filter((part) => part !== '')
  const links = parts.map((part, i) => html` / <a href="${browsePath(ref, bucket, parts.slice(0, i + 1).join('/') + '/')}">${part}</a>`)
  return html`<p id="st-path"><a href="${browsePath(ref, bucket)}">${bucket}</a>${links}</p>`
}

async function bucketSection(project: ProjectRecord, baseUrl: string, bucket: BucketSummary, folder: FolderPage, offset: number, state: FormState): Promise<Safe> {
  const ref = project.ref
  const rows = await Promise.all(
    folder.entries.map(async (entry) => {
      if (entry.kind === 'folder') {
        return html`<tr data-key="${entry.key}"><td class="line"><a href="${browsePath(ref, bucket.id, entry.key)}">${entry.name}/</a></td><td class="half muted">folder</td><td></td><td></td><td></td></tr>`
      }
      const download = await signedDownloadUrl(project, baseUrl, bucket.id, entry.key, DOWNLOAD_SECONDS)
      return html`<tr data-key="${entry.key}"><td class="line" title="${entry.name}">${entry.name}</td><td class="half">${entry.mimetype ?? ''}</td><td class="half">${size(entry.size)}</td><td class="rest" data-label="updated">${when(entry.updated_at)}</td>
<td class="row"><a href="${download}" class="button secondary" download="${entry.name}">Download</a>
<form method="post" class="inline" action="/dashboard/projects/${ref}/storage/remove" data-confirm="Remove ${bucket.id}/${entry.key}? Its bytes are deleted for good.">
<input type="hidden" name="bucket" value="${bucket.id}"><input type="hidden" name="key" value="${entry.key}"><input type="hidden" name="prefix" value="${folder.prefix}">
<button class="danger" aria-label="Remove ${entry.key}">Remove</button></form></td></tr>`
    }),
  )
  const first = offset > 0 ? html`<a href="${browsePath(ref, bucket.id, folder.prefix)}" id="st-first">First entries</a>` : ''
  const more = folder.next_offset !== null ? html`<a href="${browsePath(ref, bucket.id, folder.prefix, folder.next_offset)}" id="st-more">More</a>` : ''
  const pager = first || more ? html`<p class="row">${first}${more}</p>` : ''
  const list = rows.length === 0 ? empty(folder.prefix === '' ? 'This bucket is empty. Upload a file below.' : 'Nothing in this folder.') : table(['Name', 'Type', 'Size', 'Updated', ''], rows, undefined, { stacked: true })
  return html`<section aria-labelledby="st-browse"><h2 id="st-browse">Bucket ${bucket.name}</h2>
${crumbs(ref, bucket.id, folder.prefix)}
<div id="st-entries">${list}</div>${pager}
${state.error('remove', '')}
<p class="muted">Download links are signed URLs of the project's endpoint, valid for ${DOWNLOAD_SECONDS / 60} minutes.</p>
<h3>Upload</h3>
<form id="st-upload" data-ref="${ref}" data-bucket="${bucket.id}" data-prefix="${folder.prefix}">
<label for="st-file">File</label><input type="file" id="st-file" name="file" required>
<label for="st-name">Name in ${bucket.id}/${folder.prefix} (empty: the file's own)</label><input type="text" id="st-name" name="name" autocomplete="off" placeholder="photo.png or folder/photo.png">
<label class="check"><input type="checkbox" id="st-upsert" name="upsert"> Replace an object of that name</label>
<p id="st-upload-problem" class="error" role="alert" hidden></p>
<p><button id="st-upload-button">Upload</button> <span id="st-upload-status" aria-live="polite"></span></p>
</form>
<p class="muted">The file goes straight to the project's Storage API with a signed upload URL the dashboard makes (valid two hours, for that one name), as <code>uploadToSignedUrl()</code> sends it: the bucket's size limit and types apply.</p>
<h3>Settings of ${bucket.name}</h3>
<form method="post" action="/dashboard/projects/${ref}/storage/settings" id="st-settings">
<input type="hidden" name="bucket" value="${bucket.id}">
${settingsInputs('bucket_settings', 'st-settings', bucket, state)}
${state.error('bucket_settings', '')}
<p><button class="secondary">Save settings</button></p></form></section>`
}

function policiesSection(ref: string, policies: StoragePolicy[]): Safe {
  const rows = policies.map(
    (p) => html`<tr><td><code>${p.table}</code></td><td>${p.name}</td><td>${p.command}</td><td>${p.roles.join(', ')}</td><td>${p.permissive ? 'permissive' : 'restrictive'}</td>
<td>${p.using ? html`<code>${p.using}</code>` : ''}</td><td>${p.check ? html`<code>${p.check}</code>` : ''}</td></tr>`,
  )
  return html`<section aria-labelledby="st-policies"><h2 id="st-policies">Policies</h2>
<p>Access through the Storage API is the project's row-level security: each call runs as its caller (anon, a signed-in user), so the policies on <code>storage.objects</code> (select to download and list, insert to upload, update to replace and move, delete to remove) and <code>storage.buckets</code> decide what it may do; <code>service_role</code> bypasses them, as this tab does. The owner writes them with SQL, as on Supabase (see <code>docs/storage.md</code>).</p>
<div id="st-policy-list">${
    rows.length === 0
      ? empty('No policies yet: only the service role reaches Storage. Add them with the owner role, for example create policy ... on storage.objects for select to authenticated using (...).')
      : table(['Table', 'Policy', 'Command', 'Roles', 'Kind', 'Using', 'With check'], rows)
  }</div>
<p class="muted"><code>baseplane storage buckets ${ref}</code> lists the buckets from the command line.</p></section>`
}

function wholeNumber(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name)
  return raw !== null && /^\d{1,9}$/.test(raw) ? Number(raw) : undefined
}

/** The Storage tab of `project`, a bucket's folder browsed when `query` names one, with a form's state. */
export async function storageScreen(context: DashboardContext, project: ProjectRecord, query: URLSearchParams, state: FormState): Promise<Screen> {
  const ref = project.ref
  const chosen = query.get('bucket') || undefined
  const prefix = query.get('prefix') ?? ''
  const folder = chosen === undefined ? undefined : { bucket: chosen, prefix, limit: PER_PAGE, offset: wholeNumber(query, 'offset') }
  let shown: Awaited<ReturnType<typeof storageOverview>>
  let problem: string | undefined
  try {
    shown = await storageOverview(context.controlPlane, ref, folder)
  } catch (error) {
    // A bucket or folder typed into the URL that is not there: the tab without it, saying why.
    if (!BaseplaneError.is(error) || !['bucket_not_found', 'invalid_argument'].includes(error.code) || folder === undefined) throw error
    problem = error.message
    shown = await storageOverview(context.controlPlane, ref)
  }
  const baseUrl = keysView(project, context.addressing).base_url
  const bucket = shown.folder && shown.buckets.find((b) => b.id === shown.folder!.bucket)
  const browsing = bucket && shown.folder ? await bucketSection(project, baseUrl, bucket, shown.folder, folder?.offset ?? 0, state) : ''
  const body = html`${problem ? html`<div class="error" role="alert" id="st-problem">${problem}</div>` : ''}${summarySection(ref, shown.usage, project.plan)}
${bucketsSection(ref, shown.buckets, bucket?.id, state)}
${browsing}
${policiesSection(ref, shown.policies)}`
  // The upload goes to the project's endpoint, which is another origin where projects have hosts of their own.
  return { title: 'Storage', project, tab: 'storage', body, scripts: ['storage.js'], connect: [new URL(baseUrl).origin] }
}

export function storageScreens(context: DashboardContext): ScreenPart {
  return { pages: [projectPage('/storage', async (ref, { query }) => storageScreen(context, await getProject(context.controlPlane, ref), query, NO_STATE))] }
}
