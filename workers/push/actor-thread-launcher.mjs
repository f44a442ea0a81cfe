// From source (tests and benchmarks, under tsx) the push actor thread starts
// here: Node 20 does not apply the process's `--import tsx` hooks to a worker
// thread's ES modules, so the thread registers tsx itself before importing the
// entry (actor-thread-main.ts, passed as the last argument). Compiled,
// actor-thread-main.js is the entry itself and this file is not used.
import { register } from 'tsx/esm/api'

register()
await import(process.argv[process.argv.length - 1])
