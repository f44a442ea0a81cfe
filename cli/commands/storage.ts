// `baseplane storage ...`: a project's buckets (settings, objects, bytes), one
// folder level of a bucket, removing one object (its row and its bytes), and
// the project's stored bytes, through the operations the dashboard's Storage
// tab and the admin API use (control-plane/storage-admin.ts), which are
// Storage's own statements and checks.
import {
  listStorageBuckets,
  listStorageObjects,
  removeStorageObject,
  storageUsage,
  type BucketList,
  type FolderPage,
  type StorageUsageView,
} from '../../control-plane/storage-admin.ts'
import { integerOption, requireYes, table, type Command } from '../command.ts'
import { bytes } from './usage.ts'

const count = (n: number) => n.toLocaleString('en')

export const storageCommands: Command[] = [
  {
    words: ['storage', 'buckets'],
    positionals: ['REF'],
    usage: 'storage buckets REF',
    summary: "A project's Storage buckets: public, file size limit, allowed types, objects and bytes",
    async run(context, args) {
      return listStorageBuckets(await context.controlPlane(), args.positionals[0]!)
    },
    human: (list: BucketList) =>
      list.buckets.length === 0
        ? `No buckets. Make one with supabase.storage.createBucket() as the service role, or in the dashboard's Storage tab.`
        : table([
            ['BUCKET', 'PUBLIC', 'FILE SIZE LIMIT', 'ALLOWED TYPES', 'OBJECTS', 'SIZE'],
            ...list.buckets.map((b) => [
              b.id,
              b.public ? 'yes' : 'no',
              b.file_size_limit === null ? "plan's" : bytes(b.file_size_limit),
              b.allowed_mime_types === null || b.allowed_mime_types.length === 0 ? 'any' : b.allowed_mime_types.join(','),
              count(b.objects),
              bytes(b.bytes),
            ]),
          ]),
  },
  {
    words: ['storage', 'ls'],
    positionals: ['REF', 'BUCKET'],
    optionalPositionals: ['PREFIX'],
    usage: 'storage ls REF BUCKET [PREFIX] [--limit N] [--offset N]',
    summary: 'One folder level of a bucket, as storage-js list() lists it: folders first, then files',
    options: { limit: { type: 'string' }, offset: { type: 'string' } },
    optionHelp: { limit: 'entries a page, 1 to 1000 (default 100)', offset: 'entries to skip (the "More" line of the previous page gives it)' },
    async run(context, args) {
      const [ref, bucket, prefix] = args.positionals as [string, string, string | undefined]
      return listStorageObjects(await context.controlPlane(), ref, bucket, {
        prefix,
        limit: integerOption(args, 'limit', { min: 1, max: 1000 }),
        offset: integerOption(args, 'offset', { min: 0, max: 10_000_000 }),
      })
    },
    human: (page: FolderPage) =>
      page.entries.length === 0
        ? `Nothing in ${page.bucket}/${page.prefix}.`
        : table([
            ['NAME', 'SIZE', 'TYPE', 'UPDATED'],
            ...page.entries.map((e) => (e.kind === 'folder' ? [`${e.name}/`, '', 'folder', ''] : [e.name, e.size === null ? '' : bytes(e.size), e.mimetype ?? '', e.updated_at ?? ''])),
          ]) + (page.next_offset === null ? '' : `\nMore: --offset ${page.next_offset}`),
  },
  {
    words: ['storage', 'rm'],
    positionals: ['REF', 'BUCKET', 'KEY'],
    usage: 'storage rm REF BUCKET KEY --yes',
    summary: 'Remove one object (its row and its bytes), as the service role removes it',
    options: { yes: { type: 'boolean' } },
    optionHelp: { yes: 'confirm: the object and its bytes are gone for good' },
    async run(context, args) {
      const [ref, bucket, key] = args.positionals as [string, string, string]
      requireYes(args, `removing ${bucket}/${key} deletes its bytes`)
      return removeStorageObject(await context.controlPlane(), ref, bucket, key)
    },
    human: (result: { bucket: string; removed: string }) => `Removed ${result.bucket}/${result.removed}.`,
  },
  {
    words: ['storage', 'usage'],
    positionals: ['REF'],
    usage: 'storage usage REF',
    summary: "A project's stored bytes (what its usage and quota count), objects and buckets",
    async run(context, args) {
      return storageUsage(await context.controlPlane(), args.positionals[0]!)
    },
    human: (view: StorageUsageView) =>
      [
        `Storage of ${view.ref}`,
        `stored      ${bytes(view.bytes)} (${count(view.bytes)} bytes, every blob the platform recorded)`,
        `objects     ${count(view.objects)}`,
        `buckets     ${count(view.buckets)}`,
        `largest upload on its plan  ${bytes(view.plan_file_size_limit)}`,
      ].join('\n'),
  },
]
