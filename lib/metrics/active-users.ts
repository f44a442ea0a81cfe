// The users a node saw become active (sign-in or token refresh) per project
// and UTC month, waiting for the usage recorder's next write to the catalogue
// (data-plane/usage-recorder.ts), where a table keyed (project, month, user)
// counts each once for the fleet. Kept on the main thread, fed from the Auth
// worker's answers (ServiceResponse.usage).
//
// A user written this month is remembered, so a user who refreshes a token
// every hour costs one row a month, not one a flush. Both sets are bounded:
// past MAX_WRITTEN the remembered users are forgotten (writing one again is
// harmless: `on conflict do nothing`); past MAX_PENDING, while the catalogue
// is away, further new users are dropped and counted (`dropped`), since
// holding them would let memory grow with the outage.
import { isUuid } from '../uuid.ts'
import { monthDateOf } from './usage-counters.ts'

/** Users waiting to be written, at most (about 100 bytes each). */
export const MAX_PENDING_USERS = 200_000
/** Users remembered as written this month, at most. */
export const MAX_WRITTEN_USERS = 500_000

/** Active users as the recorder's statement takes them: parallel arrays. */
export interface ActiveUserBatch {
  refs: string[]
  /** `YYYY-MM-01`. */
  months: string[]
  users: string[]
  anonymous: boolean[]
}

/** month → ref → user id → anonymous */
type UserTree<V> = Map<string, Map<string, Map<string, V>>>

function put<V>(tree: UserTree<V>, month: string, ref: string, user: string, value: V): boolean {
  let byRef = tree.get(month)
  if (byRef === undefined) tree.set(month, (byRef = new Map()))
  let users = byRef.get(ref)
  if (users === undefined) byRef.set(ref, (users = new Map()))
  if (users.has(user)) return false
  users.set(user, value)
  return true
}

export interface ActiveUsersOptions {
  maxPending?: number
  maxWritten?: number
}

export class ActiveUsers {
  #pending: UserTree<boolean> = new Map()
  #pendingCount = 0
  #written: UserTree<true> = new Map()
  #writtenCount = 0
  readonly #maxPending: number
  readonly #maxWritten: number
  /** New users dropped because MAX_PENDING were waiting already (the catalogue away that long). */
  dropped = 0
  /** The month `seen` last worked out and the instants it spans: a refresh costs no date formatting. */
  #month = ''
  #monthFrom = 0
  #monthTo = -1

  constructor(options: ActiveUsersOptions = {}) {
    this.#maxPending = options.maxPending ?? MAX_PENDING_USERS
    this.#maxWritten = options.maxWritten ?? MAX_WRITTEN_USERS
  }

  /** `user` of project `ref` signed in or refreshed a token at `now` (ms). */
  seen(ref: string, user: string, anonymous: boolean, now: number): void {
    // The catalogue's column is a uuid: anything else would fail the whole batch, every time.
    if (!isUuid(user)) return
    const month = this.#monthOf(now)
    if (this.#written.get(month)?.get(ref)?.has(user)) return
    if (this.#pending.get(month)?.get(ref)?.has(user)) return
    if (this.#pendingCount >= this.#maxPending) {
      this.dropped += 1
      return
    }
    put(this.#pending, month, ref, user, anonymous)
    this.#pendingCount += 1
  }

  #monthOf(now: number): string {
    if (now < this.#monthFrom || now >= this.#monthTo) {
      const at = new Date(now)
      this.#monthFrom = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1)
      this.#monthTo = Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)
      this.#month = monthDateOf(now)
    }
    return this.#month
  }

  get pending(): number {
    return this.#pendingCount
  }

  /** Everything waiting, taken out for one write; `settle` says how it went. */
  take(): ActiveUserBatch {
    const batch: ActiveUserBatch = { refs: [], months: [], users: [], anonymous: [] }
    for (const [month, byRef] of this.#pending) {
      for (const [ref, users] of byRef) {
        for (const [user, anonymous] of users) {
          batch.refs.push(ref)
          batch.months.push(month)
          batch.users.push(user)
          batch.anonymous.push(anonymous)
        }
      }
    }
    this.#pending = new Map()
    this.#pendingCount = 0
    return batch
  }

  /** After the write of `batch` (taken at `now`): remembered when written, waiting again when not. */
  settle(batch: ActiveUserBatch, written: boolean, now: number): void {
    if (!written) {
      for (let i = 0; i < batch.users.length; i++) {
        if (this.#pendingCount >= this.#maxPending) {
          this.dropped += batch.users.length - i
          break
        }
        if (put(this.#pending, batch.months[i]!, batch.refs[i]!, batch.users[i]!, batch.anonymous[i]!)) this.#pendingCount += 1
      }
      return
    }
    // Only this month's users can be seen again; a month that has ended is forgotten.
    const current = monthDateOf(now)
    for (const month of this.#written.keys()) {
      if (month !== current) {
        for (const users of this.#written.get(month)!.values()) this.#writtenCount -= users.size
        this.#written.delete(month)
      }
    }
    if (this.#writtenCount + batch.users.length > this.#maxWritten) {
      this.#written = new Map()
      this.#writtenCount = 0
    }
    for (let i = 0; i < batch.users.length; i++) {
      if (batch.months[i] === current && put(this.#written, current, batch.refs[i]!, batch.users[i]!, true)) this.#writtenCount += 1
    }
  }
}
