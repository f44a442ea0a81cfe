// The `baseplane` command line. Each command lives in commands/; this file
// finds the command, parses its flags strictly and prints its result.
import { parseArgs } from 'node:util'
import { loadConfig, type PlatformConfig } from '../lib/config.ts'
import { BaseplaneError } from '../lib/errors.ts'
import { describeError, setLogLevel } from '../lib/log.ts'
import type { ControlPlane } from '../control-plane/control-plane.ts'
import { platformDatabase } from '../server/platform.ts'
import { VERSION } from '../control-plane/version.ts'
import { UsageError, type CliContext, type Command, type ParsedArgs } from './command.ts'
import { commands } from './commands/index.ts'

function help(): string {
  const lines = commands.map((command) => `  baseplane ${command.usage.padEnd(58)} ${command.summary}`)
  return `Baseplane ${VERSION}\n\nUsage:\n${lines.join('\n')}\n\nEvery command takes --json for machine-readable output.`
}

function findCommand(argv: string[]): { command: Command; rest: string[] } {
  let best: Command | undefined
  for (const command of commands) {
    const matches = command.words.every((word, i) => argv[i] === word)
    if (matches && (!best || command.words.length > best.words.length)) best = command
  }
  if (!best) {
    const words = argv.filter((arg) => !arg.startsWith('-')).slice(0, 2).join(' ')
    throw new UsageError(words ? `unknown command "${words}" (see baseplane --help)` : 'no command given (see baseplane --help)')
  }
  return { command: best, rest: argv.slice(best.words.length) }
}

function parse(command: Command, rest: string[]): ParsedArgs {
  const name = command.words.join(' ')
  let parsed
  try {
    parsed = parseArgs({ args: rest, options: { ...command.options, json: { type: 'boolean' } }, allowPositionals: true, strict: true })
  } catch (error) {
    const code = (error as { code?: string } | undefined)?.code
    const message = describeError(error)
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const option = /'([^']+)'/.exec(message)?.[1] ?? 'option'
      throw new UsageError(`unknown option ${option} for "${name}" (usage: baseplane ${command.usage})`)
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const option = /'(--?[a-z-]+)/.exec(message)?.[1] ?? 'an option'
      throw new UsageError(`${option} ${message.includes('argument missing') ? 'needs a value' : 'takes no value'} (usage: baseplane ${command.usage})`)
    }
    throw new UsageError(`${message.split('\n')[0]} (usage: baseplane ${command.usage})`)
  }
  const positionals = parsed.positionals
  if (positionals.length < command.positionals.length) {
    throw new UsageError(`missing ${command.positionals[positionals.length]} (usage: baseplane ${command.usage})`)
  }
  const allowed = command.positionals.length + (command.optionalPositionals?.length ?? 0)
  if (positionals.length > allowed) {
    throw new UsageError(`unexpected argument "${positionals[allowed]}" (usage: baseplane ${command.usage})`)
  }
  return { values: parsed.values as ParsedArgs['values'], positionals }
}

function contextFor(config: PlatformConfig, cleanups: Array<() => Promise<void>>): CliContext {
  let opened: Promise<ControlPlane> | undefined
  return {
    config,
    addressing: { publicUrl: config.publicUrl, baseDomain: config.baseDomain },
    controlPlane: () =>
      (opened ??= (async () => {
        const database = await platformDatabase(config, false)
        if (database.embedded) cleanups.push(() => database.embedded!.stop())
        const { ControlPlane } = await import('../control-plane/control-plane.ts')
        const controlPlane = await ControlPlane.open(database.url)
        cleanups.unshift(() => controlPlane.close())
        return controlPlane
      })()),
    readStdin: async () => {
      const chunks: Buffer[] = []
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
      return Buffer.concat(chunks).toString('utf8')
    },
    print: (text) => process.stdout.write(text + '\n'),
  }
}

export async function main(argv: string[]): Promise<number> {
  if (argv.includes('--version') || argv[0] === 'version') {
    process.stdout.write(`${VERSION}\n`)
    return 0
  }
  if (argv.length === 0 || argv.includes('--help') || argv[0] === 'help') {
    process.stdout.write(help() + '\n')
    return argv.length === 0 ? 2 : 0
  }
  const cleanups: Array<() => Promise<void>> = []
  try {
    const config = loadConfig()
    const { command, rest } = findCommand(argv)
    const args = parse(command, rest)
    if (command.words[0] !== 'start') setLogLevel('silent')
    const result = await command.run(contextFor(config, cleanups), args)
    if (args.values.json === true || !command.human) process.stdout.write(JSON.stringify(result, null, 2) + '\n')
    else process.stdout.write((command.human as (r: unknown) => string)(result) + '\n')
    return 0
  } catch (error) {
    if (BaseplaneError.is(error)) {
      process.stderr.write(`baseplane: ${error.message}\n`)
      return error instanceof UsageError ? 2 : 1
    }
    process.stderr.write(`baseplane: ${describeError(error)}\n`)
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
