// `baseplane --help` (every command), `baseplane <command> --help` (one
// command's usage and options) and `baseplane <group> --help` (a family).
import { VERSION } from '../control-plane/version.ts'
import type { Command } from './command.ts'

/** Options every command takes. */
export const GLOBAL_OPTIONS: Array<[string, string]> = [
  ['--json', 'print the result as JSON'],
  ['--home DIR', 'the platform home to use (default: BASEPLANE_HOME, or ./.baseplane)'],
  ['--url URL', 'the server to name in URLs (default: the one serving the home now, else BASEPLANE_PUBLIC_URL)'],
  ['--help', 'print this help'],
]

const MAX_LEFT = 60

const EXIT_CODES = 'Exit status: 0 done; 1 the operation was refused or failed; 2 the command line is wrong (unknown command or option, missing or unexpected argument).'

/** Two columns; a left cell too long to share its line puts the right one on the next. */
function columns(rows: Array<[string, string]>): string[] {
  const fits = rows.filter(([left]) => left.length <= MAX_LEFT)
  const width = Math.max(0, ...fits.map(([left]) => left.length))
  return rows.map(([left, right]) =>
    left.length <= MAX_LEFT ? `  ${left.padEnd(width)}  ${right}`.trimEnd() : `  ${left}\n  ${' '.repeat(width)}  ${right}`,
  )
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * What the usage line calls the value of `--name` (`--per-page N`, `--plan
 * free|plus`; several spellings joined with |), so help and usage say the
 * same; undefined when the usage line gives it none. A placeholder is never
 * guessed from the flag's name (`--per-page PAGE` was).
 */
function usagePlaceholder(usage: string, name: string): string | undefined {
  const found = [...usage.matchAll(new RegExp(`--${escaped(name)}(?![a-z0-9-]) ([^\\s\\]]+)`, 'g'))].map((match) => match[1]!).filter((value) => !value.startsWith('-') && value !== '...')
  return found.length === 0 ? undefined : [...new Set(found)].join('|')
}

function optionLabel(name: string, spec: { type: 'string' | 'boolean'; multiple?: boolean }, usage: string, called?: string): string {
  const value = called ?? usagePlaceholder(usage, name) ?? 'VALUE'
  return spec.type === 'string' ? `--${name} ${value}${spec.multiple ? ' ...' : ''}` : `--${name}`
}

/** The list of commands, and where this invocation's platform lives. */
export function listHelp(commands: Command[], where: string): string {
  const rows = commands.map((command): [string, string] => [`baseplane ${command.usage}`, command.summary])
  return [
    `Baseplane ${VERSION}`,
    '',
    'Usage:',
    ...columns(rows),
    '',
    'Every command takes:',
    ...columns(GLOBAL_OPTIONS),
    '',
    '`baseplane <command> --help` prints what a command does and its options.',
    EXIT_CODES,
    '',
    where,
  ].join('\n')
}

/** The commands that start with `words` (`baseplane projects --help`, `baseplane auth users --help`). */
export function groupHelp(commands: Command[], words: readonly string[]): string {
  const rows = commands
    .filter((command) => command.words.length > words.length && words.every((word, i) => command.words[i] === word))
    .map((command): [string, string] => [`baseplane ${command.usage}`, command.summary])
  return ['Usage:', ...columns(rows), '', '`baseplane <command> --help` prints what a command does and its options.'].join('\n')
}

export function commandHelp(command: Command, where: string): string {
  const own = Object.entries(command.options ?? {}).map(([name, spec]): [string, string] => [
    optionLabel(name, spec as { type: 'string' | 'boolean'; multiple?: boolean }, command.usage, command.optionValues?.[name]),
    command.optionHelp?.[name] ?? '',
  ])
  return [
    `Usage: baseplane ${command.usage}`,
    '',
    command.summary,
    '',
    ...(own.length ? ['Options:', ...columns(own), ''] : []),
    'Every command takes:',
    ...columns(GLOBAL_OPTIONS),
    ...(command.notes ? ['', command.notes] : []),
    '',
    EXIT_CODES,
    where,
  ].join('\n')
}
