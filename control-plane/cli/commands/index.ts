// Every CLI command, in the order `baseplane --help` lists them.
import type { Command } from '../command.ts'
import { authCommands } from './auth.ts'
import { mailCommands } from './mail.ts'
import { keyCommands } from './keys.ts'
import { projectCommands } from './projects.ts'
import { pushCommands } from './push.ts'
import { startCommand } from './start.ts'

export const commands: Command[] = [startCommand, ...projectCommands, ...keyCommands, ...authCommands, ...mailCommands, ...pushCommands]
