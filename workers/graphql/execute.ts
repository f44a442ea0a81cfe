// Runs a prepared operation: picks the operation, coerces variables, plans
// SQL for each root field and runs it on the caller's connection. A query is
// one statement for all its root fields; mutation fields run one statement
// each, in order. Introspection root fields are answered by introspection/.
import {
  getVariableValues, Kind,
  type DocumentNode, type FragmentDefinitionNode, type GraphQLObjectType, type OperationDefinitionNode,
} from 'graphql'
import type pg from 'pg'
import type { SchemaEntry } from './cache.ts'
import { GraphqlError, graphqlErrors } from './errors.ts'
import { explainSql, planOf, type ExplainedStatement } from './explain.ts'
import { checkCount, countOperation } from './limits.ts'
import { collectFields, type PlanContext } from './plan/context.ts'
import { mutationFieldSql, queryFieldSql } from './plan/root.ts'
import type { MutationStatement } from './plan/mutation.ts'
import { recordSql } from './plan/select.ts'
import { introspectionAnswer } from './introspection/resolve.ts'
import { introspectedSchemaOf } from './schema/index.ts'
import { jsonObject, SqlValues, text } from './sql.ts'
import { preparedCall } from '../../lib/db/prepared-statements.ts'

/** Errors that are the request's fault, listed in the response as they are. */
export class RequestErrors extends Error {
  readonly messages: string[]
  constructor(messages: string[]) {
    super(messages[0])
    this.messages = messages
  }
}

export function selectOperation(document: DocumentNode, operationName: string | undefined | null): OperationDefinitionNode {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
  let operation: OperationDefinitionNode | undefined
  if (operationName) {
    operation = operations.find((o) => o.name?.value === operationName)
    if (!operation) throw graphqlErrors.unknownOperation(operationName)
  } else {
    if (operations.length > 1) throw graphqlErrors.multipleOperations()
    operation = operations[0]
  }
  if (!operation) throw graphqlErrors.noOperation()
  if (operation.operation === 'subscription') throw graphqlErrors.subscription()
  return operation
}

export interface RunOptions {
  /** SQL sent after the data statement of a query, in the same round trip (release or commit). */
  trailer: string
  /** The role the statements run as (names the query's prepared statement). */
  role: string
  /** With the schema's `explain` on and asked for: each statement run is added here, with its plan. */
  explain?: ExplainedStatement[]
}

/** A query operation planned into one SQL expression, and how to finish its result. */
export interface PlannedQuery {
  /** The JSON expression of the data (selected `as data`), or undefined when nothing needs SQL. */
  data: string | undefined
  /** Text forms of its parameters, $1 first. */
  params: (string | null)[]
  /** Whether `data` is the whole answer's data, so its JSON text may be written as PostgreSQL returned it (no introspection fields to merge in). */
  whole: boolean
  finish(row: Record<string, unknown>): Record<string, unknown>
}

function planContext(entry: SchemaEntry, document: DocumentNode, operation: OperationDefinitionNode, rawVariables: Record<string, unknown>): PlanContext {
  // Queries bind their values as parameters of a prepared statement; mutations carry literals (sql.ts).
  const coerced = getVariableValues(entry.schema, operation.variableDefinitions ?? [], rawVariables)
  if (coerced.errors) throw new RequestErrors(coerced.errors.map((e) => e.message))
  return {
    model: entry.model,
    schema: entry.schema,
    fragments: new Map(
      document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
    ),
    variables: coerced.coerced,
    values: new SqlValues(operation.operation === 'query'),
    aliases: 0,
    recordSql,
  }
}

/** The schema's `limits` (limits.ts), held before any SQL of the operation is planned or run. */
function holdToLimits(entry: SchemaEntry, operation: OperationDefinitionNode, ctx: PlanContext): void {
  const limits = entry.model.limits
  if (limits === undefined) return
  const pageOf = (typeName: string) =>
    typeName.endsWith('Connection') ? entry.model.tableByTypeName.get(typeName.slice(0, -'Connection'.length))?.maxRows : undefined
  const error = checkCount(countOperation(entry.schema, operation, ctx.fragments, ctx.variables, pageOf), limits)
  if (error) throw error
}

/**
 * Plans a query operation without running anything; undefined for a mutation
 * (mutations run statement by statement, see runOperation).
 */
export function planQuery(
  entry: SchemaEntry,
  document: DocumentNode,
  operationName: string | undefined | null,
  rawVariables: Record<string, unknown>,
): PlannedQuery | undefined {
  const operation = selectOperation(document, operationName)
  if (operation.operation === 'mutation') return undefined
  const ctx = planContext(entry, document, operation, rawVariables)
  holdToLimits(entry, operation, ctx)
  const rootType = entry.schema.getQueryType() as GraphQLObjectType
  const fields = collectFields(ctx, rootType.name, [operation.selectionSet])
  const sqlPairs: [string, string][] = []
  const introspected = new Map<string, unknown>()
  for (const field of fields) {
    if (field.name === '__typename') sqlPairs.push([field.key, text(rootType.name)])
    else if (field.name === '__schema' || field.name === '__type') {
      if (!entry.model.introspection) throw graphqlErrors.unknownField(field.name, 'Query')
      const scope = { schema: introspectedSchemaOf(entry.schema), fragments: ctx.fragments, variables: ctx.variables }
      introspected.set(field.key, introspectionAnswer(scope, field.name, field.nodes))
    } else sqlPairs.push([field.key, queryFieldSql(ctx, rootType, field)])
  }
  return {
    data: sqlPairs.length > 0 ? jsonObject(sqlPairs) : undefined,
    params: ctx.values.texts,
    whole: introspected.size === 0,
    finish(row) {
      const data: Record<string, unknown> = {}
      for (const field of fields) data[field.key] = introspected.has(field.key) ? introspected.get(field.key) : row[field.key]
      return data
    },
  }
}

export async function runOperation(
  client: pg.ClientBase,
  entry: SchemaEntry,
  document: DocumentNode,
  operationName: string | undefined | null,
  rawVariables: Record<string, unknown>,
  options: RunOptions,
): Promise<Record<string, unknown>> {
  const planned = planQuery(entry, document, operationName, rawVariables)
  if (planned) {
    if (planned.data === undefined) {
      await client.query(options.trailer)
      return planned.finish({})
    }
    const call = preparedCall(client, options.role, `select ${planned.data} as data`, planned.params)
    if (options.explain) {
      // Its own round trip first, so a statement that then fails has its plan in the answer.
      const explained = await client.query([...call.before, explainSql(call.execute)].join('; '))
      options.explain.push({ sql: `select ${planned.data} as data`, params: planned.params, plan: planOf(lastResult(explained)) })
      const results = (await client.query(`${call.execute}; ${options.trailer}`)) as unknown as pg.QueryResult[]
      return planned.finish(results[0]!.rows[0]!.data as Record<string, unknown>)
    }
    const results = (await client.query([...call.before, call.execute, options.trailer].join('; '))) as unknown as pg.QueryResult[]
    return planned.finish(results[call.before.length]!.rows[0]!.data as Record<string, unknown>)
  }

  const { fields } = planMutation(entry, document, operationName, rawVariables)
  const data: Record<string, unknown> = {}
  // The last field that runs a statement may carry the commit in its own message, when nothing is checked
  // after it (atMost is read from its answer): one round trip fewer. Should it fail, PostgreSQL skips the
  // rest of the message, so nothing commits.
  let lastStatement = -1
  fields.forEach((field, index) => {
    if (field.statement !== undefined) lastStatement = index
  })
  let committed = false
  for (const [index, field] of fields.entries()) {
    const statement = field.statement
    if (statement === undefined) {
      data[field.key] = field.typename
      continue
    }
    if (options.explain) options.explain.push({ sql: statement.sql, params: [], plan: planOf(await client.query(explainSql(statement.sql))) })
    const withCommit = index === lastStatement && statement.atMost === undefined && options.explain === undefined
    const answer = (await client.query(withCommit ? `${statement.sql}; ${options.trailer}` : statement.sql)) as unknown as pg.QueryResult | pg.QueryResult[]
    const row = (Array.isArray(answer) ? answer[0]! : answer).rows[0] as MutationRow
    committed = withCommit
    if (statement.atMost !== undefined && row.n > statement.atMost) throw statement.tooMany!()
    data[field.key] = row.data
  }
  if (!committed) await client.query(options.trailer)
  return data
}

/** What a mutation statement answers: the rows it touched and the field's data. */
export interface MutationRow {
  n: number
  data: unknown
}

/** A mutation operation planned: each root field in order, `__typename` answered as is, any other as its statement. */
export interface PlannedMutation {
  fields: { key: string; typename?: string; statement?: MutationStatement }[]
}

/**
 * Plans every field of a mutation operation before any runs (no statement's
 * plan depends on another's result); throws what planning refuses.
 */
export function planMutation(
  entry: SchemaEntry,
  document: DocumentNode,
  operationName: string | undefined | null,
  rawVariables: Record<string, unknown>,
): PlannedMutation {
  const operation = selectOperation(document, operationName)
  const ctx = planContext(entry, document, operation, rawVariables)
  holdToLimits(entry, operation, ctx)
  const rootType = entry.schema.getMutationType() as GraphQLObjectType | null
  if (!rootType) throw new GraphqlError('no_mutation', 'Schema is not configured to execute mutation operation.')
  return {
    fields: collectFields(ctx, rootType.name, [operation.selectionSet]).map((field) =>
      field.name === '__typename' ? { key: field.key, typename: rootType.name } : { key: field.key, statement: mutationFieldSql(ctx, rootType, field) },
    ),
  }
}

/** The last result of a simple-protocol round trip (pg answers one statement with a result, several with an array). */
function lastResult(answer: pg.QueryResult | pg.QueryResult[]): pg.QueryResult {
  return Array.isArray(answer) ? answer[answer.length - 1]! : answer
}
