// The project's developers' tools (docs/developer-tools.md):
// `baseplane gen types typescript REF [--schema public,api]` prints the
// project's `Database` type as Supabase's generator does
// (control-plane/typescript-types.ts); `baseplane db push REF [--dir
// supabase/migrations]` applies a folder's migrations as the owner and
// records them in Supabase's ledger, `baseplane db migrations REF [--dir
// DIR]` lists them (control-plane/migrations.ts). Each has a remote form, the
// admin API call a member's token makes.
import { applyMigrations, DEFAULT_MIGRATIONS_DIR, listMigrations, readMigrationsFolder, type Migration, type MigrationsView, type PushView } from '../../control-plane/migrations.ts'
import { generateTypescriptTypes, includedSchemasFromText, type TypescriptTypesView } from '../../control-plane/typescript-types.ts'
import { stringOption, table, type Command, type ParsedArgs } from '../command.ts'

const schemasOf = (args: ParsedArgs) => {
  const text = stringOption(args, 'schema', false)
  return text === undefined ? undefined : includedSchemasFromText(text, 'included_schemas', '--schema')
}

/** What the admin API is sent of a folder: each migration's version, name and statements. */
const sent = (migrations: Migration[]) => migrations.map(({ version, name, statements }) => ({ version, name, statements }))

const label = (m: { version: string; name: string }) => (m.name === '' ? m.version : `${m.version}_${m.name}`)

function showPush(view: PushView): string {
  if (view.applied.length === 0) return `Nothing to apply to ${view.ref}: ${view.already_applied === 0 ? 'no migrations given' : `the ${view.already_applied === 1 ? 'migration is' : `${view.already_applied} migrations are`} applied already`}`
  const lines = [`Applied ${view.applied.length} migration${view.applied.length === 1 ? '' : 's'} to ${view.ref}:`, ...view.applied.map((m) => `  ${label(m)}`)]
  if (view.already_applied > 0) lines.push(`(${view.already_applied} applied before, left as they are)`)
  return lines.join('\n')
}

function showMigrations(view: MigrationsView): string {
  if (view.migrations.length === 0) return `No migrations applied to ${view.ref}${view.compared ? ' and none in the folder' : ''}`
  const rows = [['VERSION', 'NAME', 'STATE'], ...view.migrations.map((m) => [m.version, m.name, m.state])]
  const note = view.compared ? '' : '\n(give --dir to see which of a folder are pending or changed)'
  return table(rows) + note
}

export const developerToolCommands: Command[] = [
  {
    words: ['gen', 'types', 'typescript'],
    positionals: ['REF'],
    usage: 'gen types typescript REF [--schema public,api]',
    summary: "Print the project's database as TypeScript types, as `supabase gen types typescript` does (for createClient<Database>)",
    options: { schema: { type: 'string' } },
    optionValues: { schema: 'LIST' },
    optionHelp: { schema: "the schemas to describe, separated by commas (default: the project's exposed schemas, projects rest REF)" },
    notes: 'Write it where your code imports it: baseplane gen types typescript REF > src/database.types.ts, then createClient<Database>(url, key).',
    fieldFlags: { included_schemas: '--schema' },
    async run(context, args) {
      const schemas = schemasOf(args)
      return generateTypescriptTypes(await context.controlPlane(), args.positionals[0]!, schemas)
    },
    remote(args) {
      const schemas = schemasOf(args)
      const query = schemas === undefined ? '' : `?included_schemas=${encodeURIComponent(schemas.join(','))}`
      return { method: 'GET', path: `/projects/${encodeURIComponent(args.positionals[0]!)}/types/typescript${query}` }
    },
    human: (result: TypescriptTypesView) => result.types.replace(/\n$/, ''),
  },
  {
    words: ['db', 'push'],
    positionals: ['REF'],
    usage: `db push REF [--dir ${DEFAULT_MIGRATIONS_DIR}]`,
    summary: "Apply a folder's migrations not applied yet, in version order, as the project's owner (Supabase's supabase_migrations ledger)",
    options: { dir: { type: 'string' } },
    optionValues: { dir: 'DIR' },
    optionHelp: { dir: `the folder of <version>_<name>.sql files (default ${DEFAULT_MIGRATIONS_DIR})` },
    notes:
      'Each migration runs in its own transaction and is recorded in supabase_migrations.schema_migrations with its statements. A migration applied before is left as it is; one whose file changed since is refused before anything runs. A failing one is rolled back and stops the push, naming its file, line and PostgreSQL\'s error; those before it stay applied.',
    async run(context, args) {
      const migrations = readMigrationsFolder(stringOption(args, 'dir', false) ?? DEFAULT_MIGRATIONS_DIR)
      return applyMigrations(await context.controlPlane(), args.positionals[0]!, migrations)
    },
    remote(args) {
      const migrations = readMigrationsFolder(stringOption(args, 'dir', false) ?? DEFAULT_MIGRATIONS_DIR)
      return { method: 'POST', path: `/projects/${encodeURIComponent(args.positionals[0]!)}/database/migrations`, body: { migrations: sent(migrations) } }
    },
    human: showPush,
  },
  {
    words: ['db', 'migrations'],
    positionals: ['REF'],
    usage: 'db migrations REF [--dir DIR]',
    summary: "List the migrations applied to the project (with --dir, also the folder's pending and changed ones)",
    options: { dir: { type: 'string' } },
    optionValues: { dir: 'DIR' },
    optionHelp: { dir: 'a folder of <version>_<name>.sql files to compare with what is applied' },
    async run(context, args) {
      const dir = stringOption(args, 'dir', false)
      return listMigrations(await context.controlPlane(), args.positionals[0]!, dir === undefined ? undefined : readMigrationsFolder(dir))
    },
    remote(args) {
      const dir = stringOption(args, 'dir', false)
      return { method: 'POST', path: `/projects/${encodeURIComponent(args.positionals[0]!)}/database/migrations/status`, body: dir === undefined ? {} : { migrations: sent(readMigrationsFolder(dir)) } }
    },
    human: showMigrations,
  },
]
