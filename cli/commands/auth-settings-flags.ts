// `baseplane auth settings`' flags, made from Auth's settings table
// (workers/auth/settings-table.ts): each setting's flag, placeholder and help
// (its bounds and default added from the table), the usage line, the flags
// that name each setting in the platform's messages, reading the flags into
// a change by stored name, and the words a saved change is said in.
import { AUTH_OPTIONS, authOption, type AuthOption, type FlagPair, type ValueFlag } from '../../workers/auth/face.ts'
import { integerOption, refusedValue, stringOption, UsageError, type CliContext, type OptionSpec, type ParsedArgs } from '../command.ts'

const isPair = (cli: ValueFlag | FlagPair): cli is FlagPair => 'on' in cli

/** A switch's value. on|off is read too, silently: the README and scripts wrote `--autoconfirm on` before switches took one spelling. */
const SWITCH_WORDS: Record<string, boolean> = { true: true, false: false, on: true, off: false }

/** The table's help, with what it adds: the bounds and the default, or what the word `default` means. */
function helpOf(option: AuthOption, cli: ValueFlag): string {
  switch (option.type) {
    case 'integer':
      return `${cli.help} (${option.min} to ${option.max}; default ${option.default})`
    case 'switch':
      return `${cli.help} (default ${option.default})`
    case 'text':
    case 'list':
      return `${cli.help} (default, or the word default: ${option.defaultIs})`
    default:
      return cli.help
  }
}

const options: OptionSpec = {}
const optionHelp: Record<string, string> = {}
const optionValues: Record<string, string> = {}
const fieldFlags: Record<string, string> = {}
const usage: string[] = []
for (const option of AUTH_OPTIONS) {
  const cli: ValueFlag | FlagPair = option.cli
  if (isPair(cli)) {
    options[cli.on] = { type: 'boolean' }
    options[cli.off] = { type: 'boolean' }
    optionHelp[cli.on] = cli.help.on
    optionHelp[cli.off] = cli.help.off
    fieldFlags[option.name] = `--${cli.on}/--${cli.off}`
    usage.push(`[--${cli.on}|--${cli.off}]`)
  } else {
    options[cli.flag] = { type: 'string' }
    optionHelp[cli.flag] = helpOf(option, cli)
    optionValues[cli.flag] = cli.placeholder
    fieldFlags[option.name] = `--${cli.flag}`
    usage.push(`[--${cli.flag} ${cli.placeholder}]`)
  }
}

/** The command's options, their help and placeholders, and its usage after `REF`. */
export const SETTINGS_FLAGS = { options, optionHelp, optionValues, usage: usage.join(' ') }

/** The settings' names in the platform's messages and the flags that set them. */
export const SETTINGS_FIELD_FLAGS: Readonly<Record<string, string>> = fieldFlags

/** One setting's flag as typed: its value by stored name (null removes it), or undefined when not given. */
async function valueOf(option: AuthOption, cli: ValueFlag, args: ParsedArgs, context: CliContext): Promise<unknown> {
  const flag = cli.flag
  switch (option.type) {
    case 'integer':
      return integerOption(args, flag, option)
    case 'switch': {
      const raw = stringOption(args, flag, false)
      if (raw === undefined) return undefined
      const value = SWITCH_WORDS[raw]
      if (value === undefined) throw refusedValue(`--${flag} must be true or false, got "${raw}"`)
      return value
    }
    case 'text':
    case 'list': {
      const raw = stringOption(args, flag, false)?.trim()
      if (raw === undefined || raw === 'default') return raw === undefined ? undefined : null
      return option.type === 'list' ? raw.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '') : raw
    }
    default: {
      // "" is a value here: it removes the hook (or its secrets); - reads a secret from standard input.
      let raw = args.values[flag] as string | undefined
      if (raw === undefined) return undefined
      if (option.type === 'secret' && raw === '-') raw = await context.readStdin()
      return raw.trim() === '' ? null : raw.trim()
    }
  }
}

/** The change the flags ask for, by stored name (empty when none was given). */
export async function settingsPatch(args: ParsedArgs, context: CliContext): Promise<Record<string, unknown>> {
  const patch: Record<string, unknown> = {}
  for (const option of AUTH_OPTIONS) {
    const cli: ValueFlag | FlagPair = option.cli
    if (isPair(cli)) {
      const [on, off] = [args.values[cli.on] === true, args.values[cli.off] === true]
      if (on && off) throw new UsageError(`--${cli.on} and --${cli.off} cannot be used together`)
      if (on || off) patch[option.name] = on
      continue
    }
    const value = await valueOf(option, cli, args, context)
    if (value !== undefined) patch[option.name] = value
  }
  return patch
}

/** What a saved change of `name` is called, a switch by what it now does (`value`). */
export function changeWord(name: string, value: unknown): string {
  const option = authOption(name)
  if (!option) return name
  if (option.type === 'switch') return value === true ? option.on : option.off
  return option.noun
}
