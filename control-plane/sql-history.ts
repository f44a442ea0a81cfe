// What each caller keeps of the SQL editor (control-plane/sql-editor.ts) in a
// project: the history of their last runs (recorded by runSql) and their
// named snippets (sql/catalogue/0025), each caller's own: they are keyed by
// who calls as events name them (access.ts actorOf), the operator or a member.
import type { ProjectRecord } from '../lib/catalogue.ts'
import { BaseplaneError, platformErrors } from '../lib/errors.ts'
import { actorOf, standingOn, type Caller } from './access.ts'
import { memberErrors } from './members.ts'
import type { ControlPlane } from './control-plane.ts'
import * as db from './db/sql-editor.ts'
import { getProject } from './projects.ts'
import { HISTORY_KEPT, MAX_QUERY_CHARS } from './sql-editor.ts'

export const MAX_SNIPPETS = 200

const refuse = (message: string, field: string) => platformErrors.invalidArgument(message, field)

export interface SqlRunView {
  id: string
  query: string
  role: string
  user_id: string | null
  explain: boolean
  read_only: boolean
  at: string
  duration_ms: number
  row_count: number | null
  error_code: string | null
}

async function projectFor(controlPlane: ControlPlane, ref: string, caller: Caller): Promise<ProjectRecord> {
  const project = await getProject(controlPlane, ref)
  if (standingOn(caller, project.ref) === undefined) throw memberErrors.notAMember(project.ref)
  return project
}

/** The caller's last runs on the project, newest first (`limit` 1 to HISTORY_KEPT, default 20). */
export async function sqlHistory(controlPlane: ControlPlane, ref: string, caller: Caller, limit = 20): Promise<{ ref: string; runs: SqlRunView[] }> {
  if (!(Number.isInteger(limit) && limit >= 1 && limit <= HISTORY_KEPT)) throw refuse(`limit must be from 1 to ${HISTORY_KEPT}, got ${limit}`, 'limit')
  const project = await projectFor(controlPlane, ref, caller)
  const rows = await db.sqlRuns(controlPlane.catalogue, project.ref, actorOf(caller), limit)
  return {
    ref: project.ref,
    runs: rows.map((row) => ({ ...row, at: row.at.toISOString(), row_count: row.row_count === null ? null : Number(row.row_count) })),
  }
}

export interface SqlSnippetView {
  id: string
  name: string
  query: string
  created_at: string
  updated_at: string
}

const snippetView = (row: db.SqlSnippetRow): SqlSnippetView => ({ ...row, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() })

function snippetName(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw refuse('name must be the snippet\'s name, 1 to 100 characters', 'name')
  const name = value.trim()
  if (name.length > 100) throw refuse(`name must be at most 100 characters, got ${name.length}`, 'name')
  return name
}

function snippetQuery(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw refuse('query must be the SQL text to save', 'query')
  if (value.length > MAX_QUERY_CHARS) throw refuse(`query must be at most ${MAX_QUERY_CHARS} characters, got ${value.length}`, 'query')
  return value
}

const snippetTaken = (name: string) => new BaseplaneError('snippet_exists', `You already have a snippet named "${name}"`, 409).concerning('name')
const snippetMissing = (id: string) => new BaseplaneError('snippet_not_found', `No snippet ${id.slice(0, 40)} of yours in this project`, 404)

export async function listSqlSnippets(controlPlane: ControlPlane, ref: string, caller: Caller): Promise<{ ref: string; snippets: SqlSnippetView[] }> {
  const project = await projectFor(controlPlane, ref, caller)
  return { ref: project.ref, snippets: (await db.sqlSnippets(controlPlane.catalogue, project.ref, actorOf(caller))).map(snippetView) }
}

export async function createSqlSnippet(controlPlane: ControlPlane, ref: string, caller: Caller, input: { name: unknown; query: unknown }): Promise<SqlSnippetView> {
  const name = snippetName(input.name)
  const query = snippetQuery(input.query)
  const project = await projectFor(controlPlane, ref, caller)
  const actor = actorOf(caller)
  if ((await db.countSqlSnippets(controlPlane.catalogue, project.ref, actor)) >= MAX_SNIPPETS) {
    throw new BaseplaneError('too_many_snippets', `You have ${MAX_SNIPPETS} snippets in this project, the most there may be: delete one first`, 409)
  }
  const row = await db.insertSqlSnippet(controlPlane.catalogue, project.ref, actor, name, query)
  if (row === undefined) throw snippetTaken(name)
  return snippetView(row)
}

function snippetId(id: string): string {
  if (!/^\d{1,18}$/.test(id)) throw snippetMissing(id)
  return id
}

export async function updateSqlSnippet(controlPlane: ControlPlane, ref: string, caller: Caller, id: string, input: { name?: unknown; query?: unknown }): Promise<SqlSnippetView> {
  const change = { name: input.name === undefined ? undefined : snippetName(input.name), query: input.query === undefined ? undefined : snippetQuery(input.query) }
  if (change.name === undefined && change.query === undefined) throw refuse('Give name, query or both', 'name')
  const project = await projectFor(controlPlane, ref, caller)
  const row = await db.updateSqlSnippet(controlPlane.catalogue, project.ref, actorOf(caller), snippetId(id), change)
  if (row === 'missing') throw snippetMissing(id)
  if (row === 'taken') throw snippetTaken(change.name!)
  return snippetView(row)
}

export async function deleteSqlSnippet(controlPlane: ControlPlane, ref: string, caller: Caller, id: string): Promise<void> {
  const project = await projectFor(controlPlane, ref, caller)
  if (!(await db.deleteSqlSnippet(controlPlane.catalogue, project.ref, actorOf(caller), snippetId(id)))) throw snippetMissing(id)
}

