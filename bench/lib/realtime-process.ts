// bench:realtime's processes (the peers' servers, the load process and its
// subscriber processes): each a Node child speaking to its parent over IPC
// (structured clone, so a histogram crosses as a typed array). A child ends
// when its parent's channel does, so that no process outlives the run,
// however the parent ended; the parent also ends the ones it started.
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'

/** A message between processes: a `type` and its fields (anything structured clone carries). */
export interface Message {
  type: string
}

export interface Child {
  readonly pid: number
  send(message: Message & Record<string, unknown>): void
  /** The next message of `type` from the child (rejects if the child ends first). */
  next<T extends Message>(type: string): Promise<T>
  /** Every message of `type`, as it comes. */
  on<T extends Message>(type: string, listener: (message: T) => void): void
  stop(): Promise<void>
}

const started = new Set<ChildProcess>()

/** What a run must undo if it is cut short (servers, platforms, databases): run last in, first out. */
const cleanUps: Array<() => Promise<void>> = []

/**
 * Registers `cleanUp` for a run cut short (cleanUpAll); the answer runs it now,
 * once, and takes it off the list, for a case that finishes normally.
 */
export function onCleanUp(cleanUp: () => Promise<void>): () => Promise<void> {
  let ran: Promise<void> | undefined
  const run = () => (ran ??= cleanUp())
  cleanUps.push(run)
  return async () => {
    const at = cleanUps.indexOf(run)
    if (at !== -1) cleanUps.splice(at, 1)
    await run()
  }
}

/** Runs every registered clean-up, the latest first (one failing does not stop the others), then ends every child left. */
export async function cleanUpAll(): Promise<void> {
  for (const cleanUp of cleanUps.splice(0).reverse()) await cleanUp().catch(() => {})
  stopAll()
}

/** Ends every child still running (on the parent's way out, whatever the way). */
export function stopAll(): void {
  for (const child of started) child.kill('SIGKILL')
  started.clear()
}
process.once('exit', stopAll)

/** Starts `module` (a file URL of a .ts entry) with `arg` as its argument. */
export function startChild(module: URL, arg: unknown): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', fileURLToPath(new URL('./from-build.mjs', import.meta.url)), fileURLToPath(module), JSON.stringify(arg)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'advanced',
  })
  started.add(child)
  const waiting = new Map<string, Array<{ resolve: (m: Message) => void; reject: (e: Error) => void }>>()
  const listeners = new Map<string, (m: Message) => void>()
  const queued: Message[] = []
  let ended: Error | undefined
  child.on('message', (message: Message) => {
    const listener = listeners.get(message.type)
    if (listener) return listener(message)
    const waiter = waiting.get(message.type)?.shift()
    if (waiter) waiter.resolve(message)
    else queued.push(message)
  })
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      started.delete(child)
      ended = new Error(`${fileURLToPath(module)} ended (${signal ?? `exit code ${code}`})`)
      for (const list of waiting.values()) for (const waiter of list) waiter.reject(ended)
      waiting.clear()
      resolve()
    }),
  )
  return {
    pid: child.pid!,
    send: (message) => void (child.connected && child.send(message)),
    next<T extends Message>(type: string): Promise<T> {
      const at = queued.findIndex((m) => m.type === type)
      if (at !== -1) return Promise.resolve(queued.splice(at, 1)[0] as T)
      if (ended) return Promise.reject(ended)
      return new Promise<T>((resolve, reject) => {
        const list = waiting.get(type) ?? []
        list.push({ resolve: resolve as (m: Message) => void, reject })
        waiting.set(type, list)
      })
    },
    on<T extends Message>(type: string, listener: (message: T) => void): void {
      listeners.set(type, listener as (m: Message) => void)
    },
    async stop() {
      if (ended) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000)
      await exited
      clearTimeout(timer)
    },
  }
}

/** In a child: its argument, and the parent's channel, whose end ends this process. */
export function childArg<T>(): T {
  process.once('disconnect', () => process.exit(0))
  return JSON.parse(process.argv[2]!) as T
}

/** In a child: a message to the parent. */
export function tellParent<T extends Message>(message: T): void {
  process.send?.(message)
}

/** In a child: every message of `type` from the parent. */
export function fromParent<T extends Message>(type: string, listener: (message: T) => void): void {
  process.on('message', (message: Message) => {
    if (message.type === type) listener(message as T)
  })
}

/** Seconds of CPU (user and system, every thread) a process has spent, from /proc; NaN where there is none. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100 // USER_HZ
  } catch {
    return NaN
  }
}

/** The machine's CPU time so far (every core), busy and in all, from /proc/stat; zeros where there is none. */
export function machineTicks(): { busy: number; total: number } {
  try {
    const [, ...fields] = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/)
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    const ticks = fields.slice(0, 8).map(Number)
    const total = ticks.reduce((sum, t) => sum + t, 0)
    return { busy: total - ticks[3]! - ticks[4]!, total }
  } catch {
    return { busy: 0, total: 0 }
  }
}
