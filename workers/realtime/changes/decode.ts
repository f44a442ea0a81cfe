// pgoutput's messages made into Postgres Changes: a transaction's row changes
// and realtime.messages inserts gathered from `begin` to `commit`, then handed
// on as one batch with the commit's time. Values arrive as PostgreSQL's text
// (pgoutput.ts); those JSON has a type for become it (numbers, booleans,
// json), the rest stay text, which realtime-js converts by the column's type
// (its transformers) as it does Supabase's.
import type { Pgoutput } from 'pg-logical-replication'
import type { Change, ChangeBatch, ChangeColumn, RowChange, SqlBroadcast } from './messages.ts'

const NUMERIC = new Set(['int2', 'int4', 'int8', 'float4', 'float8', 'numeric', 'oid'])
const JSON_TYPES = new Set(['json', 'jsonb'])

function valueOf(type: string, raw: unknown): unknown {
  if (raw === null || raw === undefined || typeof raw !== 'string') return raw
  if (type === 'bool') return raw === 't'
  if (NUMERIC.has(type)) {
    const n = Number(raw)
    return Number.isFinite(n) ? n : raw
  }
  if (JSON_TYPES.has(type)) {
    try {
      return JSON.parse(raw)
    } catch {
      return raw
    }
  }
  return raw
}

function recordOf(columns: ChangeColumn[], tuple: Record<string, unknown> | null | undefined): Record<string, unknown> | undefined {
  if (!tuple) return undefined
  const record: Record<string, unknown> = {}
  for (const { name, type } of columns) {
    // Undefined: an unchanged TOASTed value pgoutput does not resend, or a column outside the key tuple.
    if (tuple[name] !== undefined) record[name] = valueOf(type, tuple[name])
  }
  return record
}

function pick(record: Record<string, unknown> | undefined, names: string[]): Record<string, unknown> | undefined {
  if (!record || names.length === 0) return undefined
  return Object.fromEntries(names.filter((name) => name in record).map((name) => [name, record[name]]))
}

const isMessages = (relation: Pgoutput.MessageRelation) => relation.schema === 'realtime' && relation.name === 'messages'

function broadcastOf(tuple: Record<string, unknown>): SqlBroadcast | undefined {
  if (tuple.extension !== 'broadcast' || typeof tuple.topic !== 'string') return undefined
  const binary = typeof tuple.binary_payload === 'string'
  let payload: unknown = null
  if (binary) payload = Buffer.from((tuple.binary_payload as string).replace(/^\\x/, ''), 'hex').toString('base64')
  else if (typeof tuple.payload === 'string') payload = JSON.parse(tuple.payload)
  return { kind: 'broadcast', id: String(tuple.id), topic: tuple.topic, event: typeof tuple.event === 'string' ? tuple.event : '', private: tuple.private === 't', payload, binary }
}

/** Gathers one project's stream into transactions. */
export class TransactionAssembler {
  readonly #ref: string
  readonly #typeNames: Map<number, string>
  #changes: Change[] = []
  #xid = 0

  constructor(ref: string, typeNames: Map<number, string>) {
    this.#ref = ref
    this.#typeNames = typeNames
  }

  #columns(relation: Pgoutput.MessageRelation): ChangeColumn[] {
    return relation.columns.map((c) => ({ name: c.name, type: c.typeName ?? this.#typeNames.get(c.typeOid) ?? String(c.typeOid) }))
  }

  /** One message; a commit answers its transaction's batch (none when nothing in it was published). */
  add(message: Pgoutput.Message): ChangeBatch | undefined {
    switch (message.tag) {
      case 'begin':
        this.#changes = []
        this.#xid = message.xid
        return undefined
      case 'commit': {
        const changes = this.#changes
        this.#changes = []
        if (changes.length === 0) return undefined
        return { ref: this.#ref, commitTimestamp: new Date(Number(BigInt(message.commitTime as bigint) / 1000n)).toISOString(), xid: this.#xid, changes }
      }
      case 'insert': {
        if (isMessages(message.relation)) {
          const broadcast = broadcastOf(message.new)
          if (broadcast) this.#changes.push(broadcast)
          return undefined
        }
        const columns = this.#columns(message.relation)
        this.#changes.push(this.#row(message.relation, 'INSERT', columns, recordOf(columns, message.new), undefined))
        return undefined
      }
      case 'update': {
        if (isMessages(message.relation)) return undefined
        const columns = this.#columns(message.relation)
        const record = recordOf(columns, message.new)
        // Without an old tuple (the key did not change, identity DEFAULT or INDEX), the key is the new row's.
        const old = recordOf(columns, message.old ?? message.key) ?? (message.relation.replicaIdentity === 'nothing' ? undefined : pick(record, message.relation.keyColumns))
        this.#changes.push(this.#row(message.relation, 'UPDATE', columns, record, old))
        return undefined
      }
      case 'delete': {
        if (isMessages(message.relation)) return undefined
        const columns = this.#columns(message.relation)
        this.#changes.push(this.#row(message.relation, 'DELETE', columns, undefined, recordOf(columns, message.old ?? message.key)))
        return undefined
      }
      default:
        return undefined
    }
  }

  #row(relation: Pgoutput.MessageRelation, type: RowChange['type'], columns: ChangeColumn[], record: Record<string, unknown> | undefined, oldRecord: Record<string, unknown> | undefined): RowChange {
    return { kind: 'row', schema: relation.schema, table: relation.name, type, columns, ...(record ? { record } : {}), ...(oldRecord ? { oldRecord } : {}) }
  }
}
