// What a CLI command is, the context it runs in, and the CLI's own errors.
import type { ParseArgsConfig } from 'node:util'
import type { PlatformConfig } from '../lib/config.ts'
import { BaseplaneError, platformErrors } from '../lib/errors.ts'
import type { ControlPlane } from '../control-plane/control-plane.ts'
import type { Addressing } from '../control-plane/views.ts'

export type OptionSpec = NonNullable<ParseArgsConfig['options']>

export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | undefined>
  positionals: string[]
}

export interface CliContext {
  config: PlatformConfig
  /** `--url` and `--token` as given (`login` reads them; the others run through main's choice of local or remote). */
  globals?: { url?: string; token?: string }
  addressing: Addressing
  /** Opens the catalogue (starting the embedded server if it is not running; refused where there is no platform). */
  controlPlane(): Promise<ControlPlane>
  readStdin(): Promise<string>
  print(text: string): void
  /** A line for the operator on standard error (`baseplane: note: ...`): true of the result, not a refusal; standard output stays the result. */
  note(text: string): void
}

export interface Command {
  /** Words that name the command, e.g. ['projects', 'create']. */
  words: string[]
  /** Positional arguments after the words, e.g. ['REF']. */
  positionals: string[]
  /** Positional arguments that may follow the required ones, e.g. ['reset']. */
  optionalPositionals?: string[]
  usage: string
  summary: string
  options?: OptionSpec
  /** What each option does, by option name, for `baseplane <command> --help`. */
  optionHelp?: Record<string, string>
  /** What an option's value is called in that help, where the last word of its name would mislead (`--service-role DURATION`). */
  optionValues?: Record<string, string>
  /** Paragraphs `baseplane <command> --help` prints after the options. */
  notes?: string
  /**
   * API field names in the platform's messages and the flags that set them
   * (e.g. mail_per_hour: '--mail-per-hour'): the CLI's errors speak in flags.
   */
  fieldFlags?: Record<string, string>
  run(context: CliContext, args: ParsedArgs): Promise<unknown>
  /**
   * The admin API call this command makes when it runs with a member's
   * personal access token (`--token`, or `baseplane login`'s saved one)
   * instead of on the catalogue: the route, and a body that the route answers
   * with what `run` returns, so `human` prints either. Absent: the command is
   * the operator's alone, run on the platform's home (issue 42).
   */
  remote?(args: ParsedArgs, context: CliContext): Promise<RemoteCall> | RemoteCall
  /** Human-readable output of run's result; JSON with --json or without this. */
  human?(result: never, context: CliContext): string
}

/** An admin API request (`path` under /platform/v1, with its query string) a command makes for a member. */
export interface RemoteCall {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  path: string
  body?: unknown
}

/**
 * The command line as written is wrong (unknown command or option, a missing
 * or unexpected argument, options that exclude each other): exit status 2.
 * A value the operation refuses is not one of these (exit status 1).
 */
export class UsageError extends BaseplaneError {
  constructor(message: string) {
    super('usage', message, 400)
    this.name = 'UsageError'
  }
}

/** A command other than `start` pointed at a home where no platform was ever started. */
export class NoPlatformError extends BaseplaneError {
  constructor(home: string) {
    super(
      'no_platform',
      `no Baseplane platform in ${home}: \`baseplane start\` creates one there; to use another, give --home DIR or BASEPLANE_HOME=DIR (or DATABASE_URL)`,
      404,
    )
    this.name = 'NoPlatformError'
  }
}

/** The guard of a command that destroys: `what` it does, unless --yes confirms it. */
export function requireYes(args: ParsedArgs, what: string): void {
  if (args.values.yes !== true) throw new UsageError(`${what}: add --yes to confirm`)
}

/** A value the command refuses before asking the platform: exit status 1, as the platform's own refusals. */
export function refusedValue(message: string): BaseplaneError {
  return platformErrors.invalidArgument(message)
}

export function stringOption(args: ParsedArgs, name: string, required: true): string
export function stringOption(args: ParsedArgs, name: string, required: false): string | undefined
export function stringOption(args: ParsedArgs, name: string, required: boolean): string | undefined {
  const value = args.values[name]
  if (value === undefined) {
    if (required) throw new UsageError(`missing --${name}`)
    return undefined
  }
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} needs a value`)
  return value
}

/** A whole-number option within bounds; the message names the flag, the range and what was given. */
export function integerOption(args: ParsedArgs, name: string, bounds: { min: number; max: number }): number | undefined {
  const raw = stringOption(args, name, false)
  if (raw === undefined) return undefined
  const value = /^-?\d+$/.test(raw) ? Number(raw) : NaN
  if (!(value >= bounds.min && value <= bounds.max)) {
    throw refusedValue(`--${name} must be a whole number from ${bounds.min} to ${bounds.max}, got ${/^-?\d+$/.test(raw) ? raw : JSON.stringify(raw)}`)
  }
  return value
}

export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n')
}
