// One `baseplane start` per home. Two would both listen on the port (uWebSockets
// sets SO_REUSEPORT) and adopt the same embedded PostgreSQL, and the second's
// stop would take the database from under the first. An advisory lock cannot
// guard this (PostgreSQL is not running yet), so the home holds a pid file,
// written whole or not at all, that a later start checks for a live owner.
import crypto from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { BaseplaneError } from '../lib/errors.ts'

const FILE = 'baseplane.pid'

/** What the pid file says about the running start. */
export interface Holder {
  pid: number
  /** The process's start time in clock ticks since boot (Linux), so a reused pid is not taken for it. */
  started?: string
  port: number
  url: string
}

export class AlreadyRunningError extends BaseplaneError {
  constructor(home: string, holder: Holder) {
    super(
      'already_running',
      `Baseplane is already running on ${home}: pid ${holder.pid}, port ${holder.port} (${holder.url}); stop it first (Ctrl-C in its terminal, or kill ${holder.pid}), or give this one another home with --home DIR`,
      409,
    )
    this.name = 'AlreadyRunningError'
  }
}

export class PortInUseError extends BaseplaneError {
  constructor(host: string, port: number) {
    super('port_in_use', `port ${port} on ${host} is already in use by another process: stop it, or choose another port with PORT=`, 409)
    this.name = 'PortInUseError'
  }
}

/** Field 22 of /proc/<pid>/stat; undefined where there is no /proc. */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}

function alive(holder: Holder): boolean {
  try {
    process.kill(holder.pid, 0)
  } catch (error) {
    // EPERM: it exists, run by another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  const started = startTimeOf(holder.pid)
  return holder.started === undefined || started === undefined || started === holder.started
}

function read(file: string): Holder | undefined {
  try {
    const holder = JSON.parse(fs.readFileSync(file, 'utf8')) as Holder
    return Number.isInteger(holder.pid) ? holder : undefined
  } catch {
    return undefined
  }
}

/** Writes the file in one step: a temporary file, then link (fails if one exists) or rename (replaces ours). */
function write(file: string, holder: Holder, replace: boolean): boolean {
  const temporary = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`
  fs.writeFileSync(temporary, JSON.stringify(holder) + '\n')
  try {
    if (replace) fs.renameSync(temporary, file)
    else fs.linkSync(temporary, file)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  } finally {
    fs.rmSync(temporary, { force: true })
  }
}

export interface HomeLock {
  /** Records the port and address actually served (PORT=0 picks one). */
  serving(port: number, url: string): void
  release(): void
}

/**
 * Takes the home for this process, or throws AlreadyRunningError naming the
 * process that has it. A file left by a process that is gone (killed, crashed)
 * is taken over.
 */
export function lockHome(home: string, port: number, url: string): HomeLock {
  fs.mkdirSync(home, { recursive: true })
  const file = path.join(home, FILE)
  const mine: Holder = { pid: process.pid, started: startTimeOf(process.pid), port, url }
  for (let attempt = 0; ; attempt++) {
    if (write(file, mine, false)) break
    const holder = read(file)
    if (holder && holder.pid !== process.pid && alive(holder)) throw new AlreadyRunningError(home, holder)
    if (attempt >= 3) throw new BaseplaneError('already_running', `another start keeps taking ${file}; try again`, 409)
    // Stale (its process is gone) or not ours to read (writes are whole, so not a start's). Read
    // again just before removing it, so a start that took it over meanwhile keeps it.
    if (read(file)?.pid === holder?.pid) fs.rmSync(file, { force: true })
  }
  let held = true
  const release = () => {
    if (!held) return
    held = false
    if (read(file)?.pid === process.pid) fs.rmSync(file, { force: true })
  }
  // A start that ends any other way than stop() (an uncaught error, process.exit) leaves no file behind.
  process.once('exit', release)
  return {
    serving: (servedPort, servedUrl) => {
      if (held) write(file, { ...mine, port: servedPort, url: servedUrl }, true)
    },
    release,
  }
}

/**
 * Refuses a port another process listens on. uWebSockets would share it
 * (SO_REUSEPORT) and the kernel would split the connections between the two;
 * a plain listen, as this probe makes, is refused instead.
 */
export async function checkPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return
  await new Promise<void>((resolve, reject) => {
    const probe = net.createServer()
    probe.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? reject(new PortInUseError(host, port)) : resolve()))
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()))
  })
}

/** The start running on this home, if any (what `baseplane status` shows). */
export function runningStart(home: string): Holder | undefined {
  const holder = read(path.join(home, FILE))
  return holder && alive(holder) ? holder : undefined
}
