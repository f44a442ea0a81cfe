// The admin API's SQL editor (control-plane/sql-editor.ts), as the CLI's
// `db query`: `POST /projects/{ref}/database/query` in the shape of
// Supabase's management API (`{query, read_only?, parameters?}` answering
// 201 with an array of row objects, a refusal 400 with its message), so its
// tools can call it; Baseplane's options beside (`role`, `user`, `explain`,
// `analyze`, and `format: "table"` for the columns with their types, a page
// of rows and whether there are more); the caller's history and snippets.
// Any member may run SQL (`read`): a read-only member's runs are read-only
// transactions. History and snippets are each caller's own.
import { platformErrors } from '../../lib/errors.ts'
import type { ControlPlane } from '../control-plane.ts'
import { readSqlRunInput, rowObjects, runSql, SqlError } from '../sql-editor.ts'
import { createSqlSnippet, deleteSqlSnippet, listSqlSnippets, sqlHistory, updateSqlSnippet } from '../sql-history.ts'
import type { Addressing } from '../views.ts'
import { queryNumber, REF_PARAM, type AdminRoute } from './route.ts'

function onlySnippetFields(body: Record<string, unknown>): void {
  const unknown = Object.keys(body).find((key) => key !== 'name' && key !== 'query')
  if (unknown !== undefined) throw platformErrors.invalidArgument(`Unknown field "${unknown.slice(0, 40)}": a snippet has a name and a query`, unknown)
}

const SNIPPET_PARAM = { ...REF_PARAM, id: '[0-9]{1,18}' }

/** A statement PostgreSQL refused: 400 with its code, message, detail, hint and position, beside the admin API's `code` and `message`. */
async function answered<T>(work: () => Promise<T>): Promise<T | [number, unknown]> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof SqlError) return [400, error.body()]
    throw error
  }
}

export function sqlEditorRoutes(controlPlane: ControlPlane, addressing: Addressing): AdminRoute[] {
  return [
    {
      method: 'POST',
      path: '/projects/:ref/database/query',
      where: REF_PARAM,
      access: 'read',
      handler: async ({ params, body, caller }) => {
        const raw = await body()
        const format = raw.format ?? 'rows'
        if (format !== 'rows' && format !== 'table') throw platformErrors.invalidArgument('format must be "rows" (an array of row objects, as Supabase answers) or "table" (columns, types and a page of rows)', 'format')
        const { format: _format, ...rest } = raw
        const input = readSqlRunInput(rest)
        if (format === 'rows') {
          if (input.limit !== undefined || input.offset !== undefined) throw platformErrors.invalidArgument('limit and offset page the table format: add "format": "table"', 'limit')
          input.limit = 'all'
          input.values = 'json'
          input.wholeResult = true
        }
        const result = await answered(() => runSql(controlPlane, params.ref!, caller, input, { addressing }))
        if (Array.isArray(result)) return result as [number, unknown]
        return format === 'rows' ? [201, rowObjects(result)] : [200, result]
      },
    },
    {
      method: 'GET',
      path: '/projects/:ref/database/query/history',
      where: REF_PARAM,
      access: 'read',
      handler: async ({ params, query, caller }) => [200, await sqlHistory(controlPlane, params.ref!, caller, queryNumber(query, 'limit'))],
    },
    {
      method: 'GET',
      path: '/projects/:ref/database/snippets',
      where: REF_PARAM,
      access: 'read',
      handler: async ({ params, caller }) => [200, await listSqlSnippets(controlPlane, params.ref!, caller)],
    },
    {
      method: 'POST',
      path: '/projects/:ref/database/snippets',
      where: REF_PARAM,
      access: 'read',
      handler: async ({ params, body, caller }) => {
        const fields = await body()
        onlySnippetFields(fields)
        return [201, await createSqlSnippet(controlPlane, params.ref!, caller, { name: fields.name, query: fields.query })]
      },
    },
    {
      method: 'PATCH',
      path: '/projects/:ref/database/snippets/:id',
      where: SNIPPET_PARAM,
      access: 'read',
      handler: async ({ params, body, caller }) => {
        const fields = await body()
        onlySnippetFields(fields)
        return [200, await updateSqlSnippet(controlPlane, params.ref!, caller, params.id!, { name: fields.name, query: fields.query })]
      },
    },
    {
      method: 'DELETE',
      path: '/projects/:ref/database/snippets/:id',
      where: SNIPPET_PARAM,
      access: 'read',
      handler: async ({ params, caller }) => {
        await deleteSqlSnippet(controlPlane, params.ref!, caller, params.id!)
        return [204, null]
      },
    },
  ]
}
