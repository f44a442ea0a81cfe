// `baseplane status`: which home and database this command line uses, whether
// a platform exists there and whether `baseplane start` is serving it. It
// reads files only: it neither starts PostgreSQL nor makes a platform.
import type { Command } from '../command.ts'
import { runningStart } from '../home-lock.ts'
import { databasePhrase, whereOf, type Where } from '../where.ts'

type Status = Where & { running: { pid: number; port: number; url: string } | null }

export const statusCommand: Command = {
  words: ['status'],
  positionals: [],
  usage: 'status',
  summary: 'Which home and database the CLI uses, and whether `baseplane start` serves them',
  notes: 'Point the CLI at another platform with --home DIR or BASEPLANE_HOME=DIR (embedded PostgreSQL), or DATABASE_URL.',
  async run(context): Promise<Status> {
    const where = whereOf(context.config)
    const holder = runningStart(context.config.home)
    return { ...where, running: holder ? { pid: holder.pid, port: holder.port, url: holder.url } : null }
  },
  human: (status: Status) =>
    [
      `home       ${status.home}`,
      `database   ${databasePhrase(status)}${status.platform ? '' : ' (no platform there yet: `baseplane start` creates one)'}`,
      `server     ${status.running ? `running: pid ${status.running.pid}, port ${status.running.port} (${status.running.url})` : 'not running here (`baseplane start`)'}`,
    ].join('\n'),
}
