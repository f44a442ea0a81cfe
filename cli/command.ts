// What a CLI command is, and the context it runs in.
import type { ParseArgsConfig } from 'node:util'
import type { PlatformConfig } from '../lib/config.ts'
import { BaseplaneError } from '../lib/errors.ts'
import type { ControlPlane } from '../control-plane/control-plane.ts'
import type { Addressing } from '../control-plane/views.ts'

export type OptionSpec = NonNullable<ParseArgsConfig['options']>

export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | undefined>
  positionals: string[]
}

export interface CliContext {
  config: PlatformConfig
  addressing: Addressing
  /** Opens the catalogue (starting the embedded server if it is not running). */
  controlPlane(): Promise<ControlPlane>
  readStdin(): Promise<string>
  print(text: string): void
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
  run(context: CliContext, args: ParsedArgs): Promise<unknown>
  /** Human-readable output of run's result; JSON with --json or without this. */
  human?(result: never): string
}

/** A wrong command line: printed as one line, exit status 2. */
export class UsageError extends BaseplaneError {
  constructor(message: string) {
    super('usage', message, 400)
    this.name = 'UsageError'
  }
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

export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n')
}
