// Where Storage's statements run: the caller's (every API call, as the caller's
// role, so the project's policies decide), the service role's (what Supabase
// runs as its superuser: a bucket's settings for an upload, a public or signed
// object), and the platform's (baseplane_storage.blobs, where no owner code runs).
import type pg from 'pg'
import { classifyDatabaseError, READ_ONLY_TRANSACTION } from '../../lib/db/database-errors.ts'
import type { DatabasePool } from '../../lib/db/project-pools.ts'
import { OWN_TRANSACTION, withRequestTransaction, withTransaction } from '../../lib/db/request-transaction.ts'
import type { RequestIdentity } from '../../lib/roles.ts'
import type { StorageProjectContext } from '../../lib/service.ts'
import { projectPools } from '../../lib/worker-context.ts'
import { storageErrors } from './errors.ts'

export type Client = pg.PoolClient

const SERVICE_ROLE: RequestIdentity = Object.freeze({ role: 'service_role', claims: Object.freeze({ role: 'service_role' }) })

export class StorageDatabase {
  readonly #project: StorageProjectContext
  readonly #api: DatabasePool
  readonly #platform: DatabasePool

  constructor(project: StorageProjectContext) {
    this.#project = project
    this.#api = projectPools().get(project.database)
    this.#platform = projectPools().get(project.platformDatabase ?? project.database)
  }

  /** One transaction as `identity`; its database failures answered in Storage's words. */
  asCaller<T>(identity: RequestIdentity, work: (client: Client) => Promise<T>): Promise<T> {
    return withRequestTransaction(this.#api, identity, this.#project.roleTimeouts, work).catch((error: unknown) => rethrown(error, this.#project))
  }

  asService<T>(work: (client: Client) => Promise<T>): Promise<T> {
    return this.asCaller(SERVICE_ROLE, work)
  }

  /** The platform's own bookkeeping (baseplane_storage), on its login role. */
  asPlatform<T>(work: (client: Client) => Promise<T>): Promise<T> {
    return withTransaction(() => this.#platform.connect(), OWN_TRANSACTION.open, work).catch((error: unknown) => rethrown(error, this.#project))
  }
}

/**
 * A PostgreSQL error as Storage answers it: unavailable and timeouts as 503/504, a policy's refusal, a
 * duplicate. A read-only refusal is the size quota's only where the platform made the transaction
 * read-only (the project past its cap); otherwise the server is read-only (a standby, a promotion).
 */
function rethrown(error: unknown, project: Pick<StorageProjectContext, 'readOnly'>): never {
  const failure = classifyDatabaseError(error, { readOnlyByPlatform: project.readOnly === true })
  if (failure === 'unavailable') throw Object.assign(storageErrors.databaseUnavailable(), { cause: error })
  if (failure === 'timeout') throw storageErrors.databaseTimeout()
  const code = (error as { code?: string }).code
  if (code === '42501') throw storageErrors.accessDenied()
  if (code === '23505') throw storageErrors.keyExists()
  if (code === READ_ONLY_TRANSACTION) throw storageErrors.quotaExceeded('This project has reached its database size quota, so Storage cannot record new objects')
  throw error
}
