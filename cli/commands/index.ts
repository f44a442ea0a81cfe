// Every CLI command, in the order `baseplane --help` lists them.
import type { Command } from '../command.ts'
import { authCommands } from './auth.ts'
import { authUserCommands } from './auth-users.ts'
import { eventsCommand } from './events.ts'
import { mailCommands } from './mail.ts'
import { keyCommands } from './keys.ts'
import { projectCommands } from './projects.ts'
import { pushCommands } from './push.ts'
import { roleCommands } from './roles.ts'
import { serverCommands } from './servers.ts'
import { startCommand } from './start.ts'
import { statusCommand } from './status.ts'
import { timeoutCommands } from './timeouts.ts'
import { usageCommand } from './usage.ts'
import { quotaCommands } from './quotas.ts'
import { restCommands } from './rest.ts'

export const commands: Command[] = [startCommand, statusCommand, ...projectCommands, ...timeoutCommands, ...quotaCommands, ...restCommands, ...roleCommands, ...keyCommands, ...authCommands, ...authUserCommands, ...mailCommands, ...pushCommands, usageCommand, eventsCommand, ...serverCommands]
