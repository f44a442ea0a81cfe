// Every CLI command, in the order `baseplane --help` lists them.
import type { Command } from '../command.ts'
import { keyCommands } from './keys.ts'
import { projectCommands } from './projects.ts'
import { startCommand } from './start.ts'

export const commands: Command[] = [startCommand, ...projectCommands, ...keyCommands]
