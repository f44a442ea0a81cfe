// The project gate: which key was sent, and who the caller is. The apikey must
// be exactly one of the project's two keys; the Bearer token must verify with
// the project's secret (HS256) or one of its signing keys by kid (ES256 or
// RS256) and name one of the API roles or one of the project's own roles
// (`baseplane projects roles`): lib/jwt.ts callerOf, which the dashboard's
// GraphQL explorer uses too.
import { LRUCache } from 'lru-cache'
import type { ProjectRecord } from '../lib/catalogue.ts'
import type { RequestIdentity } from '../lib/roles.ts'
import { platformErrors } from '../lib/errors.ts'
import { callerOf } from '../lib/jwt.ts'

export type KeyRole = 'anon' | 'service_role'

interface Verified {
  identity: RequestIdentity
  /** Milliseconds since the epoch (verifyJwt requires exp). */
  expiresAt: number
}

interface ProjectKeys {
  /** The project's two keys; a Map lookup compares by hash first, so it leaks nothing useful about them. */
  roles: Map<string, KeyRole>
  /** Tokens verified with this record's secret and keys. A new record (any change, a rotation too) starts empty. */
  tokens: Map<string, Verified>
}

const MAX_TOKENS_PER_PROJECT = 10000
/** Characters of refused keys remembered, over every project (a key's length and its ref's each). */
const REFUSED_KEYS_SIZE = 4_000_000

export class Gate {
  readonly #projects = new WeakMap<ProjectRecord, ProjectKeys>()
  /**
   * "<ref> <apikey>" to the record version that refused the key after reading
   * the catalogue again: the same wrong key is refused at once, without another
   * read, until the record changes (a rotation bumps its version).
   */
  readonly #refusedKeys = new LRUCache<string, number>({ maxSize: REFUSED_KEYS_SIZE, sizeCalculation: (_version, key) => key.length + 16 })

  #keysOf(project: ProjectRecord): ProjectKeys {
    let keys = this.#projects.get(project)
    if (keys === undefined) {
      keys = {
        roles: new Map<string, KeyRole>([
          [project.anonKey, 'anon'],
          [project.serviceRoleKey, 'service_role'],
        ]),
        tokens: new Map(),
      }
      this.#projects.set(project, keys)
    }
    return keys
  }

  /** Which of the project's keys `apikey` is; undefined when it is neither. */
  keyRole(project: ProjectRecord, apikey: string): KeyRole | undefined {
    return this.#keysOf(project).roles.get(apikey)
  }

  /** Whether `apikey` was refused by this version of the project's record (see refuse()). */
  refusedBefore(project: ProjectRecord, apikey: string): boolean {
    return this.#refusedKeys.get(`${project.ref} ${apikey}`) === project.version
  }

  /** Remembers that `apikey` is neither key of this version of the record, which was read again to be sure. */
  refuse(project: ProjectRecord, apikey: string): void {
    this.#refusedKeys.set(`${project.ref} ${apikey}`, project.version)
  }

  /** The caller, if its token was verified before and has not expired; throws on a malformed header. */
  cachedIdentity(project: ProjectRecord, apikey: string, authorization: string | undefined): RequestIdentity | undefined {
    const token = tokenOf(apikey, authorization)
    const hit = this.#keysOf(project).tokens.get(token)
    if (hit === undefined || hit.expiresAt <= Date.now()) return undefined
    return hit.identity
  }

  /**
   * The caller: the Bearer token's claims when one is sent, else the apikey's.
   * `authorization` is the raw header value.
   */
  async identify(project: ProjectRecord, apikey: string, authorization: string | undefined): Promise<RequestIdentity> {
    const token = tokenOf(apikey, authorization)
    const cached = this.cachedIdentity(project, apikey, authorization)
    if (cached !== undefined) return cached
    const identity = await callerOf(project, token)
    const claims = identity.claims
    const tokens = this.#keysOf(project).tokens
    if (tokens.size >= MAX_TOKENS_PER_PROJECT) tokens.clear()
    tokens.set(token, { identity, expiresAt: (claims.exp as number) * 1000 })
    return identity
  }
}

function tokenOf(apikey: string, authorization: string | undefined): string {
  if (authorization === undefined || authorization === '') return apikey
  // The usual spelling, without a regular expression; anything else is checked below.
  if (authorization.startsWith('Bearer ') && authorization.length > 7 && authorization.indexOf(' ', 7) === -1) return authorization.slice(7)
  const match = /^bearer\s+(\S+)\s*$/i.exec(authorization)
  if (!match) throw platformErrors.badJwt('Authorization header must be "Bearer <token>"')
  return match[1]!
}
