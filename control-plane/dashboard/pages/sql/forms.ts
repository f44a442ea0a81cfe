// The SQL tab's calls, posted by its script (assets/sql.js): a run
// (control-plane/sql-editor.ts runSql, as the signed-in caller: a read-only
// member's runs are read-only there, whatever the page sent), and a snippet
// saved, changed or deleted. Each answers the operation's view, or 400 with
// PostgreSQL's fields for a refused statement, or the refusal's code,
// message and field.
import { BaseplaneError } from '../../../../lib/errors.ts'
import type { Caller } from '../../../access.ts'
import { readSqlRunInput, runSql, SqlError } from '../../../sql-editor.ts'
import { createSqlSnippet, deleteSqlSnippet, updateSqlSnippet } from '../../../sql-history.ts'
import { REF_PARAM, type CallInput, type DashboardCall, type DashboardContext, type FormsPart } from '../../module.ts'

/** An answer, or a refusal as the page's script reads it. */
async function answered(work: () => Promise<[number, unknown]>): Promise<[number, unknown]> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof SqlError) return [400, error.body()]
    if (BaseplaneError.is(error) && error.status < 500) return [error.status, { code: error.code, message: error.message, ...(error.field ? { field: error.field } : {}) }]
    throw error
  }
}

const object = (body: unknown): Record<string, unknown> => (typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {})

/** The page's body: its "Run as" says `user` for a chosen user (runAsChoice), which runs as authenticated. */
async function run(context: DashboardContext, ref: string, caller: Caller, body: unknown): Promise<[number, unknown]> {
  const sent = object(body)
  const fields: Record<string, unknown> = { ...sent, role: sent.role === 'user' ? 'authenticated' : sent.role }
  if (fields.role !== 'authenticated') delete fields.user
  const input = readSqlRunInput(fields)
  return [200, await runSql(context.controlPlane, ref, caller, input, context)]
}

function snippetCall(method: 'POST', rest: string, call: (input: CallInput) => Promise<[number, unknown]>): DashboardCall {
  return { method, path: `/projects/:ref${rest}`, where: { ...REF_PARAM, id: '[0-9]{1,18}' }, access: 'read', call: (input) => answered(() => call(input)) }
}

export function sqlForms(context: DashboardContext): FormsPart {
  const cp = context.controlPlane
  return {
    calls: [
      { method: 'POST', path: '/projects/:ref/sql/run', where: REF_PARAM, access: 'read', call: (input) => answered(() => run(context, input.params.ref!, input.caller, input.body)) },
      {
        method: 'POST',
        path: '/projects/:ref/sql/snippets',
        where: REF_PARAM,
        access: 'read',
        call: (input) => answered(async () => [201, await createSqlSnippet(cp, input.params.ref!, input.caller, { name: object(input.body).name, query: object(input.body).query })]),
      },
      snippetCall('POST', '/sql/snippets/:id', async (input) => [200, await updateSqlSnippet(cp, input.params.ref!, input.caller, input.params.id!, { name: object(input.body).name, query: object(input.body).query })]),
      snippetCall('POST', '/sql/snippets/:id/delete', async (input) => {
        await deleteSqlSnippet(cp, input.params.ref!, input.caller, input.params.id!)
        return [200, { deleted: input.params.id }]
      }),
    ],
  }
}
