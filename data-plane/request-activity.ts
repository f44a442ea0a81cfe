// Which projects this node served, for the pause of idle free projects (issue
// 27 item 4). A request the data plane lets through to a project adds its ref
// to a set (the hot path's whole cost); once a flush interval (a minute, or a
// tenth of a shorter BASEPLANE_PAUSE_IDLE_DAYS) the node writes the set in one
// statement, stamped with the catalogue's clock, and starts a new one. A write
// that fails is kept for the next. A project's last request is thus known to
// within a flush interval, and the catalogue takes one write per node per
// interval whatever the traffic.
//
// Its own table rather than the usage minutes (sql/catalogue/0013_usage.sql):
// those count refused requests too, may be switched off (BASEPLANE_USAGE), and
// are rolled up into hours within minutes, while the pause wants the time of
// the last request the project itself answered.
import type pg from 'pg'
import { incidents } from '../lib/db/database-errors.ts'

/** How the incident log names a failing write. */
const SOURCE = 'the catalogue (last requests)'

const WRITE = `
insert into baseplane.project_activity as a (ref, last_request_at)
select p.ref, now() from baseplane.projects p where p.ref = any($1::text[])
on conflict (ref) do update set last_request_at = greatest(a.last_request_at, excluded.last_request_at)`

export class RequestActivity {
  #seen = new Set<string>()
  #timer: NodeJS.Timeout | undefined
  #writing: Promise<void> | undefined
  #catalogue: Pick<pg.Pool, 'query'> | undefined

  /** A request for `ref` was let through (data-plane.ts). */
  seen(ref: string): void {
    this.#seen.add(ref)
  }

  /** Writes every `everyMillis` on `catalogue` (a pool with deadlines of its own) until stopped. */
  start(catalogue: Pick<pg.Pool, 'query'>, everyMillis: number): void {
    this.#catalogue = catalogue
    this.#timer = setInterval(() => void this.flush(), everyMillis)
    this.#timer.unref()
  }

  /** Writes the projects seen since the last write (tests call it too); a write still running is joined. */
  flush(): Promise<void> {
    this.#writing ??= this.#write().finally(() => (this.#writing = undefined))
    return this.#writing
  }

  /** Stops the timer and writes what is held. */
  async stop(): Promise<void> {
    clearInterval(this.#timer)
    await this.#writing
    await this.flush()
  }

  async #write(): Promise<void> {
    const catalogue = this.#catalogue
    if (catalogue === undefined || this.#seen.size === 0) return
    const refs = [...this.#seen]
    this.#seen = new Set()
    try {
      await catalogue.query({ name: 'baseplane_write_activity', text: WRITE, values: [refs] })
      incidents.recovered(SOURCE)
    } catch (error) {
      for (const ref of refs) this.#seen.add(ref)
      incidents.failed(SOURCE, error, { projects: refs.length })
    }
  }
}
