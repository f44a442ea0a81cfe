// The admin API's developer tools (docs/developer-tools.md), at the paths
// Supabase's management API has them so its tools can call them:
// `GET /projects/{ref}/types/typescript?included_schemas=public,api`
// answers `{ types }` (typescript-types.ts); `GET
// /projects/{ref}/database/migrations` lists the ledger
// (`[{ version, name }]`, Supabase's list) and `POST` applies migrations
// (migrations.ts), `{ migrations: [{ version, name, statements | query }] }`
// as `baseplane db push` sends a folder, or Supabase's one `{ query, name }`;
// `POST /projects/{ref}/database/migrations/status` (ours) answers what
// `baseplane db migrations` shows: each migration applied, pending or changed.
import type { ControlPlane } from '../control-plane.ts'
import { applyMigrations, listMigrations, migrationsFromBody } from '../migrations.ts'
import { generateTypescriptTypes, includedSchemasFromText } from '../typescript-types.ts'
import { REF_PARAM, type AdminRoute } from './route.ts'

export function developerToolRoutes(controlPlane: ControlPlane): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/projects/:ref/types/typescript',
      where: REF_PARAM,
      access: 'read',
      handler: async ({ params, query }) => {
        const included = query.get('included_schemas')
        const schemas = included === null || included.trim() === '' ? undefined : includedSchemasFromText(included)
        return [200, await generateTypescriptTypes(controlPlane, params.ref!, schemas)]
      },
    },
    {
      method: 'GET',
      path: '/projects/:ref/database/migrations',
      where: REF_PARAM,
      access: 'read',
      handler: async ({ params }) => [200, (await listMigrations(controlPlane, params.ref!)).migrations.map(({ version, name }) => ({ version, name }))],
    },
    {
      method: 'POST',
      path: '/projects/:ref/database/migrations',
      where: REF_PARAM,
      access: 'write',
      handler: async ({ params, body, caller }) => [200, await applyMigrations(controlPlane, params.ref!, migrationsFromBody(await body()), { caller })],
    },
    {
      // What `db migrations` shows: with the folder's migrations, which are pending or changed; without, the ledger.
      method: 'POST',
      path: '/projects/:ref/database/migrations/status',
      where: REF_PARAM,
      access: 'read',
      handler: async ({ params, body }) => {
        const sent = await body()
        return [200, await listMigrations(controlPlane, params.ref!, sent.migrations === undefined ? undefined : migrationsFromBody(sent))]
      },
    },
  ]
}
