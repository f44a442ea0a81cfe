// The `baseplane` command line. Each command lives in commands/; this file
// finds the command, parses its flags strictly, runs it and prints its result.
// Exit status: 2 when the command line is wrong (UsageError), 1 when the
// operation is refused or fails, 0 otherwise.
import { parseArgs } from 'node:util'
import { loadConfig, type PlatformConfig } from '../lib/config.ts'
import { BaseplaneError } from '../lib/errors.ts'
import { describeError, setLogLevel } from '../lib/log.ts'
import type { ControlPlane } from '../control-plane/control-plane.ts'
import { withUnacknowledged } from '../control-plane/unacknowledged.ts'
import { platformDatabase } from '../server/platform-database.ts'
import { VERSION } from '../control-plane/version.ts'
import { NoPlatformError, UsageError, type CliContext, type Command, type ParsedArgs } from './command.ts'
import { commands } from './commands/index.ts'
import { commandHelp, groupHelp, listHelp } from './help.ts'
import { nearestCommand } from './suggest.ts'
import { whereLine, whereOf } from './where.ts'
import { runningStart } from './home-lock.ts'
import { callAdminApi, savedLogin, type SavedLogin } from './member-login.ts'
import { withActor } from '../control-plane/events.ts'

/** The words typed before the first option: the command's and its positionals. */
function leadingWords(argv: string[]): string[] {
  const end = argv.findIndex((arg) => arg.startsWith('-'))
  return end === -1 ? argv : argv.slice(0, end)
}

function isGroup(word: string | undefined): boolean {
  return commands.some((command) => command.words.length > 1 && command.words[0] === word)
}

/** The first words of longer commands (`auth`, `auth users`, `push credentials`): their help lists them. */
function startsCommands(words: string[]): boolean {
  return commands.some((command) => command.words.length > words.length && words.every((word, i) => command.words[i] === word))
}

function unknownCommand(argv: string[]): UsageError {
  const typed = leadingWords(argv)
  const near = nearestCommand(commands, typed)
  if (near) return new UsageError(`unknown command "${near.typed}"; did you mean "${near.command.words.join(' ')}"? (see baseplane --help)`)
  if (isGroup(typed[0])) {
    const names = commands.filter((command) => command.words[0] === typed[0]).map((command) => command.words.slice(1).join(' '))
    const what = typed.length > 1 ? `unknown command "${typed.slice(0, 2).join(' ')}"` : `"${typed[0]}" needs a command`
    return new UsageError(`${what}: use one of ${names.join(', ')} (see baseplane ${typed[0]} --help)`)
  }
  const words = typed.slice(0, 2).join(' ')
  return new UsageError(words ? `unknown command "${words}" (see baseplane --help)` : 'no command given (see baseplane --help)')
}

function findCommand(argv: string[]): { command: Command; rest: string[] } | undefined {
  let best: Command | undefined
  for (const command of commands) {
    const matches = command.words.every((word, i) => argv[i] === word)
    if (matches && (!best || command.words.length > best.words.length)) best = command
  }
  return best && { command: best, rest: argv.slice(best.words.length) }
}

/**
 * `--home DIR` and `--url URL` (or `--home=DIR`, `--url=URL`), which every
 * command takes: they stand for BASEPLANE_HOME and the server named in URLs, so they
 * are taken out before the command's own options are parsed.
 */
function takeGlobals(argv: string[]): { home: string | undefined; url: string | undefined; token: string | undefined; argv: string[] } {
  const rest: string[] = []
  const found: { home?: string; url?: string; token?: string } = {}
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') {
      rest.push(...argv.slice(i))
      break
    }
    const name = (['home', 'url', 'token'] as const).find((option) => arg === `--${option}` || arg.startsWith(`--${option}=`))
    if (name !== undefined) {
      const value = arg === `--${name}` ? argv[++i] : arg.slice(`--${name}=`.length)
      if (value === undefined || value === '' || (arg === `--${name}` && value.startsWith('-'))) {
        throw new UsageError(
          name === 'home' ? '--home needs a value (a folder)' : name === 'token' ? '--token needs a value (a personal access token)' : '--url needs a value (the server, such as http://127.0.0.1:8000)',
        )
      }
      found[name] = value
      continue
    }
    rest.push(arg)
  }
  if (found.url !== undefined && !/^https?:\/\/[^/]+/.test(found.url)) throw new UsageError(`--url must be the server's http:// or https:// address, got "${found.url}"`)
  return { home: found.home, url: found.url?.replace(/\/+$/, ''), token: found.token, argv: rest }
}

/**
 * node's parseArgs takes "-5" after a string option for another option and
 * refuses it as ambiguous: a negative number there is the option's value
 * (for the command to accept or refuse with its range).
 */
function joinNegativeNumbers(command: Command, args: string[]): string[] {
  const joined: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    const spec = arg.startsWith('--') && !arg.includes('=') ? command.options?.[arg.slice(2)] : undefined
    const next = args[i + 1]
    if (spec?.type === 'string' && next !== undefined && /^-\d+(\.\d+)?$/.test(next)) {
      joined.push(`${arg}=${next}`)
      i++
    } else joined.push(arg)
  }
  return joined
}

function parse(command: Command, rest: string[]): ParsedArgs {
  const name = command.words.join(' ')
  const usage = `(usage: baseplane ${command.usage})`
  let parsed
  try {
    parsed = parseArgs({ args: joinNegativeNumbers(command, rest), options: { ...command.options, json: { type: 'boolean' } }, allowPositionals: true, strict: true })
  } catch (error) {
    const code = (error as { code?: string } | undefined)?.code
    const message = describeError(error)
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const option = /'([^']+)'/.exec(message)?.[1] ?? 'option'
      throw new UsageError(`unknown option ${option} for "${name}" ${usage}`)
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const option = /'(--?[a-z0-9-]+)/.exec(message)?.[1] ?? 'an option'
      if (message.includes('does not take an argument')) throw new UsageError(`${option} takes no value ${usage}`)
      // "argument missing", or "ambiguous": what follows starts with "-".
      throw new UsageError(`${option} needs a value ${usage}`)
    }
    throw new UsageError(`${message.split('\n')[0]} ${usage}`)
  }
  const positionals = parsed.positionals
  if (positionals.length < command.positionals.length) {
    throw new UsageError(`missing ${command.positionals[positionals.length]} ${usage}`)
  }
  const allowed = command.positionals.length + (command.optionalPositionals?.length ?? 0)
  if (positionals.length > allowed) {
    throw new UsageError(`unexpected argument "${positionals[allowed]}" ${usage}`)
  }
  return { values: parsed.values as ParsedArgs['values'], positionals }
}

/** The platform's message in the command line's terms: API field names become the flags that set them. */
function inFlagTerms(error: BaseplaneError, fieldFlags: Record<string, string> | undefined): BaseplaneError {
  if (!fieldFlags || error instanceof UsageError) return error
  let message = error.message
  for (const field of Object.keys(fieldFlags).sort((a, b) => b.length - a.length)) {
    const escaped = field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    message = message.replace(new RegExp(`(?<![\\w.-])"?${escaped}"?(?![\\w.])`, 'g'), fieldFlags[field]!)
  }
  return message === error.message ? error : new BaseplaneError(error.code, message, error.status, error.hint, error.retryAfter)
}

/**
 * The server the command names in URLs (no command calls it): `--url`, else the one serving
 * this home now (its real port, from the home's lock), else the configured one.
 */
function servedUrl(config: PlatformConfig, url: string | undefined): string {
  return url ?? runningStart(config.home)?.url ?? config.publicUrl
}

function contextFor(config: PlatformConfig, cleanups: Array<() => Promise<void>>, url: string | undefined, token?: string): CliContext {
  let opened: Promise<ControlPlane> | undefined
  return {
    config,
    globals: { url, token },
    addressing: { publicUrl: servedUrl(config, url), baseDomain: config.baseDomain },
    controlPlane: () =>
      (opened ??= (async () => {
        // Only `start` makes a platform: anywhere else an empty home is a mistake to name, not to fill.
        if (!whereOf(config).platform) throw new NoPlatformError(config.home)
        const database = await platformDatabase(config, false)
        if (database.embedded) cleanups.push(() => database.embedded!.stop())
        const { ControlPlane } = await import('../control-plane/control-plane.ts')
        const controlPlane = await ControlPlane.open(database.url, { storage: config.storage })
        cleanups.unshift(() => controlPlane.close())
        return controlPlane
      })()),
    readStdin: async () => {
      const chunks: Buffer[] = []
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
      return Buffer.concat(chunks).toString('utf8')
    },
    print: (text) => process.stdout.write(text + '\n'),
    note: (text) => process.stderr.write(`baseplane: note: ${text}\n`),
  }
}

function configFor(home: string | undefined): PlatformConfig {
  return loadConfig(home === undefined ? process.env : { ...process.env, BASEPLANE_HOME: home })
}

/** `--help` anywhere, `help ...`, or nothing at all. Returns the exit status. */
function help(argv: string[], home: string | undefined): number {
  const words = leadingWords(argv[0] === 'help' ? argv.slice(1) : argv.filter((arg) => arg !== '--help' && arg !== '-h'))
  let where: string
  try {
    where = whereLine(whereOf(configFor(home)))
  } catch (error) {
    where = `(The configuration is wrong: ${describeError(error)})`
  }
  if (words.length === 0) {
    process.stdout.write(listHelp(commands, where) + '\n')
    return argv.length === 0 ? 2 : 0
  }
  const found = findCommand(words)
  if (found) process.stdout.write(commandHelp(found.command, where) + '\n')
  else if (startsCommands(words)) process.stdout.write(groupHelp(commands, words) + '\n')
  else {
    process.stderr.write(`baseplane: ${unknownCommand(words).message}\n`)
    return 2
  }
  return 0
}

/** Done, but not everywhere yet: the nodes named may serve the old state until they hear from the catalogue again or a balancer takes them out. */
function unacknowledgedWarning(nodes: string[]): string {
  const [which, they, hear] = nodes.length === 1 ? ['node', 'it', 'hears'] : ['nodes', 'they', 'hear']
  return `baseplane: warning: the change is made, but data-plane ${which} ${nodes.join(', ')} did not acknowledge it in time: ${they} may serve the old state until ${they} ${hear} from the catalogue again (or a balancer takes ${they === 'it' ? 'it' : 'them'} out: BASEPLANE_CATALOGUE_SILENCE_MS)`
}

/**
 * The member's token in effect, with the platform it is for: `--token` (or
 * BASEPLANE_TOKEN) with `--url` (or BASEPLANE_URL), else what `baseplane
 * login` saved. `login` and `logout` handle the token themselves.
 */
function memberLogin(command: Command, url: string | undefined, token: string | undefined): SavedLogin | undefined {
  if (command.words[0] === 'login' || command.words[0] === 'logout') return undefined
  const saved = savedLogin()
  // An empty variable is an unset one.
  const chosen = token ?? (process.env.BASEPLANE_TOKEN || undefined) ?? saved?.token
  if (chosen === undefined || chosen === '') return undefined
  const where = url ?? (process.env.BASEPLANE_URL?.replace(/\/+$/, '') || undefined) ?? saved?.url
  if (where === undefined) throw new UsageError('--token needs the platform too: --url URL or BASEPLANE_URL (or save both with baseplane login)')
  return { url: where, token: chosen }
}

function operatorOnly(command: Command): BaseplaneError {
  return new BaseplaneError(
    'operator_only',
    `"baseplane ${command.words.join(' ')}" is the operator's: run it on the platform's home without a member token (baseplane logout forgets a saved one)`,
    403,
  )
}

export async function main(argv: string[]): Promise<number> {
  let home: string | undefined
  let url: string | undefined
  let token: string | undefined
  try {
    ;({ home, url, token, argv } = takeGlobals(argv))
  } catch (error) {
    process.stderr.write(`baseplane: ${describeError(error)}\n`)
    return 2
  }
  if (argv.includes('--version') || argv[0] === 'version') {
    process.stdout.write(`${VERSION}\n`)
    return 0
  }
  const beforeEnd = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv
  if (argv.length === 0 || argv[0] === 'help' || beforeEnd.includes('--help') || beforeEnd.includes('-h')) return help(argv, home)
  const cleanups: Array<() => Promise<void>> = []
  let command: Command | undefined
  try {
    const config = configFor(home)
    const found = findCommand(argv)
    if (!found) throw unknownCommand(argv)
    command = found.command
    const args = parse(command, found.rest)
    if (command.words[0] !== 'start') setLogLevel('silent')
    const context = contextFor(config, cleanups, command.words[0] === 'start' ? undefined : url, token)
    // A change not every node acknowledged in time is a warning; `start` serves until stopped (its admin API reports per request).
    const chosen = command
    const member = memberLogin(chosen, url, token)
    // A member's token in effect: the command is its admin API call, or refused; the operator's runs on the home, as the operator.
    const run = member
      ? async () => {
          if (!chosen.remote) throw operatorOnly(chosen)
          return callAdminApi(member.url, member.token, await chosen.remote(args, context))
        }
      : () => withActor('operator', () => chosen.run(context, args))
    const { result, unacknowledged } = chosen.words[0] === 'start' ? { result: await run(), unacknowledged: [] as string[] } : await withUnacknowledged(run)
    if (args.values.json === true || !command.human) process.stdout.write(JSON.stringify(result, null, 2) + '\n')
    else process.stdout.write((command.human as (r: unknown, c: CliContext) => string)(result, context) + '\n')
    if (unacknowledged.length > 0) process.stderr.write(`${unacknowledgedWarning(unacknowledged)}\n`)
    return 0
  } catch (error) {
    // Under --json a script reads the refusal as JSON too: {code, message} on standard error, the same exit status.
    const json = beforeEnd.includes('--json')
    if (BaseplaneError.is(error)) {
      const refusal = inFlagTerms(error, command?.fieldFlags)
      process.stderr.write(json ? `${JSON.stringify({ code: refusal.code, message: refusal.message })}\n` : `baseplane: ${refusal.message}\n`)
      return error instanceof UsageError ? 2 : 1
    }
    process.stderr.write(json ? `${JSON.stringify({ code: 'failed', message: describeError(error) })}\n` : `baseplane: ${describeError(error)}\n`)
    return 1
  } finally {
    for (const cleanup of cleanups) {
      await cleanup().catch((error: unknown) => process.stderr.write(`baseplane: while finishing: ${describeError(error)}\n`))
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exit(await main(process.argv.slice(2)))
}
