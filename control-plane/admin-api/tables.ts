// The admin API's table editor (`/platform/v1/projects/{ref}/tables...`),
// the operations of table-editor.ts, as the dashboard's Tables tab calls them.
// Reads are any member's; changes a developer's or an owner's. A refusal that
// concerns a column (a constraint, a value, a definition's field) says which
// in `column` beside the usual `{code, message}`, so a tool can draw it beside
// its input.
import { BaseplaneError, FieldErrors, platformErrors } from '../../lib/errors.ts'
import { platformErrorResponse } from '../../lib/http/errors.ts'
import type { ControlPlane } from '../control-plane.ts'
import {
  addPolicy,
  alterTable,
  createTable,
  deleteRow,
  describeTable,
  dropPolicy,
  dropTable,
  insertRow,
  listRows,
  listTables,
  setRowLevelSecurity,
  updateRow,
  type RowsRequest,
} from '../table-editor.ts'
import { queryNumber, REF_PARAM, type AdminRoute } from './route.ts'

function decoded(raw: string, name: string): string {
  try {
    return decodeURIComponent(raw)
  } catch {
    throw platformErrors.invalidArgument(`${name} is not well-formed percent-encoding`, name)
  }
}

/** The admin API's answer, with the refusal's field as `column` when it names one. */
async function answering(work: () => Promise<[number, unknown]>): Promise<[number, unknown]> {
  try {
    return await work()
  } catch (error) {
    // Several refusals together (FieldErrors): the first one's field, as their code and status are the first one's.
    const field = error instanceof FieldErrors ? error.errors[0]?.field : BaseplaneError.is(error) ? error.field : undefined
    if (!BaseplaneError.is(error) || field === undefined || error.status >= 500) throw error
    const body = JSON.parse(String(platformErrorResponse(error).body)) as Record<string, unknown>
    return [error.status, { ...body, column: field }]
  }
}

/** `?limit=&offset=&sort=&order=asc|desc&where.<column>=<operator>.<value>` (PostgREST's way of naming a filter). */
export function rowsRequestOf(query: URLSearchParams): RowsRequest {
  const order = query.get('order')
  if (order !== null && order !== '' && order !== 'asc' && order !== 'desc') throw platformErrors.invalidArgument('order must be asc or desc', 'order')
  const filters: NonNullable<RowsRequest['filters']> = []
  for (const [name, value] of query) {
    if (!name.startsWith('where.')) continue
    const dot = value.indexOf('.')
    filters.push({ column: name.slice('where.'.length), operator: dot < 0 ? value : value.slice(0, dot), value: dot < 0 ? '' : value.slice(dot + 1) })
  }
  return { limit: queryNumber(query, 'limit'), offset: queryNumber(query, 'offset'), sort: query.get('sort') ?? undefined, descending: order === 'desc', filters }
}

export function tableEditorRoutes(controlPlane: ControlPlane): AdminRoute[] {
  const tables = '/projects/:ref/tables'
  const table = `${tables}/:schema/:table`
  const names = (params: Record<string, string>) => [decoded(params.schema!, 'schema'), decoded(params.table!, 'table')] as const
  return [
    { method: 'GET', path: tables, where: REF_PARAM, access: 'read', handler: async ({ params }) => [200, await listTables(controlPlane, params.ref!)] },
    {
      method: 'POST',
      path: tables,
      where: REF_PARAM,
      access: 'write',
      handler: ({ params, body }) => answering(async () => [201, await createTable(controlPlane, params.ref!, await body())]),
    },
    { method: 'GET', path: table, where: REF_PARAM, access: 'read', handler: async ({ params }) => [200, await describeTable(controlPlane, params.ref!, ...names(params))] },
    {
      method: 'PATCH',
      path: table,
      where: REF_PARAM,
      access: 'write',
      handler: ({ params, body }) => answering(async () => [200, await alterTable(controlPlane, params.ref!, ...names(params), await body())]),
    },
    {
      method: 'DELETE',
      path: table,
      where: REF_PARAM,
      access: 'write',
      handler: ({ params, query }) => answering(async () => [200, await dropTable(controlPlane, params.ref!, ...names(params), query.get('confirm') ?? undefined)]),
    },
    {
      method: 'GET',
      path: `${table}/rows`,
      where: REF_PARAM,
      access: 'read',
      handler: ({ params, query }) => answering(async () => [200, await listRows(controlPlane, params.ref!, ...names(params), rowsRequestOf(query))]),
    },
    {
      method: 'POST',
      path: `${table}/rows`,
      where: REF_PARAM,
      access: 'write',
      handler: ({ params, body }) => answering(async () => [201, await insertRow(controlPlane, params.ref!, ...names(params), (await body()).values)]),
    },
    {
      method: 'PATCH',
      path: `${table}/rows`,
      where: REF_PARAM,
      access: 'write',
      handler: ({ params, body }) =>
        answering(async () => {
          const sent = await body()
          return [200, await updateRow(controlPlane, params.ref!, ...names(params), sent.key, sent.values)]
        }),
    },
    {
      method: 'DELETE',
      path: `${table}/rows`,
      where: REF_PARAM,
      access: 'write',
      handler: ({ params, body }) => answering(async () => [200, await deleteRow(controlPlane, params.ref!, ...names(params), (await body()).key)]),
    },
    {
      method: 'PUT',
      path: `${table}/rls`,
      where: REF_PARAM,
      access: 'write',
      handler: ({ params, body }) => answering(async () => [200, await setRowLevelSecurity(controlPlane, params.ref!, ...names(params), await body())]),
    },
    {
      method: 'POST',
      path: `${table}/policies`,
      where: REF_PARAM,
      access: 'write',
      handler: ({ params, body }) => answering(async () => [201, await addPolicy(controlPlane, params.ref!, ...names(params), await body())]),
    },
    {
      method: 'DELETE',
      path: `${table}/policies/:policy`,
      where: REF_PARAM,
      access: 'write',
      handler: ({ params }) => answering(async () => [200, await dropPolicy(controlPlane, params.ref!, ...names(params), decoded(params.policy!, 'policy'))]),
    },
  ]
}
