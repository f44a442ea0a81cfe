// The one classification of connection-level failures (lib/db/database-errors.ts):
// which errors mean "a database is unavailable" (503 with Retry-After), and the
// incident log that says so once, and once again when it ends.
import t from 'tap'
import { classifyDatabaseError, databaseAnswered, databaseErrors, Incidents, isConnectionLost, reportDatabaseFailure, unavailableAs } from '../../lib/db/database-errors.ts'
import { BaseplaneError, platformErrors } from '../../lib/errors.ts'
import { logLevel, setLogLevel } from '../../lib/log.ts'

const coded = (code: string, message = 'failed') => Object.assign(new Error(message), { code })

t.test('connection-level failures are unavailable; a request\'s own error is not', async (t) => {
  const unavailable: Array<[string, unknown]> = [
    ['ECONNREFUSED', coded('ECONNREFUSED')],
    ['ECONNRESET', coded('ECONNRESET')],
    ['admin_shutdown', coded('57P01', 'terminating connection due to administrator command')],
    ['cannot_connect_now', coded('57P03', 'the database system is starting up')],
    ['database does not exist', coded('3D000', 'database "bp_x" does not exist')],
    ['too_many_connections', coded('53300', 'sorry, too many clients already')],
    ['allow_connections false', coded('55000', 'database "bp_x" is not currently accepting connections')],
    ['pg.Pool connect timeout', new Error('timeout exceeded when trying to connect')],
    ['pg.Client connect timeout', new Error('Connection terminated due to connection timeout')],
    ['query_timeout', new Error('Query read timeout')],
    ['both addresses of localhost refused', new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')])],
    ['connection lost', new Error('Connection terminated unexpectedly')],
    ['a protocol violation that ends the session', Object.assign(coded('08P01', 'invalid frontend message type 0'), { severity: 'FATAL' })],
  ]
  for (const [name, error] of unavailable) {
    t.equal(classifyDatabaseError(error), 'unavailable', name)
    const answer = unavailableAs(error, platformErrors.catalogueUnavailable)
    t.same(answer?.toData(), {
      code: 'catalogue_unavailable',
      message: 'The platform catalogue is unavailable; try again shortly',
      status: 503,
      retryAfter: 2,
    }, `${name}: 503 with Retry-After`)
  }
  const own: Array<[string, unknown]> = [
    ['unique_violation', coded('23505', 'duplicate key value')],
    ['another 55000', coded('55000', 'currval of sequence "s" is not yet defined in this session')],
    ['a bug', new TypeError('x is not a function')],
    // A NUL in a statement's text: PostgreSQL refuses the message (ERROR) and the session goes on.
    ['a statement refused for its content', Object.assign(coded('08P01', 'invalid message format'), { severity: 'ERROR' })],
    ['a product that is off', platformErrors.productDisabled('push', 'abcdefghijklmnopqrst')],
    ['a 404', platformErrors.unknownProject('abcdefghijklmnopqrst')],
  ]
  for (const [name, error] of own) t.equal(unavailableAs(error, platformErrors.catalogueUnavailable), undefined, name)
  t.notOk(isConnectionLost(Object.assign(coded('08P01', 'invalid message format'), { severity: 'ERROR' })), 'a refused statement is no dead connection (no retry, no replacement)')
  const noAnswer = databaseErrors.noAnswer(5000, true)
  t.equal(classifyDatabaseError(noAnswer), 'unavailable', 'a round trip past its deadline')
  t.same(unavailableAs(noAnswer, platformErrors.catalogueUnavailable)?.toData(), { code: 'database_no_answer', message: noAnswer.message, status: 503, retryAfter: 2 }, 'is a 503 with Retry-After')
  t.notOk(isConnectionLost(noAnswer), 'a round trip that met its deadline is not sent again')
  t.match(databaseErrors.noAnswer(5000, true).message, /within 5000 ms; its connection was closed \(the statement may have committed\)$/, 'the log line says a write may have committed')
  t.match(databaseErrors.noAnswer(5000, false).message, /\(its transaction was not committed\)$/)
  const busy = new BaseplaneError('database_busy', 'No database connection became free within 5000 ms', 503, undefined, 2)
  t.equal(unavailableAs(busy, platformErrors.catalogueUnavailable), busy, 'a catalogue error that already says 503 is kept')
})

t.test('an incident is logged when it begins and when it ends, not per failure', async (t) => {
  const lines = await logged(() => {
    const incidents = new Incidents()
    incidents.recovered('the catalogue')
    for (let i = 0; i < 100; i++) incidents.failed('the catalogue', coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'))
    incidents.failed('the database of project a', coded('3D000', 'database "bp_a" does not exist'))
    t.ok(incidents.failing('the catalogue'))
    incidents.recovered('the catalogue')
    incidents.recovered('the catalogue')
    t.notOk(incidents.failing('the catalogue'))
    incidents.failed('the catalogue', coded('57P03', 'the database system is starting up'))
  })
  t.same(
    lines.map((line) => [line.level, line.message, line.code, line.failures]),
    [
      ['error', 'the catalogue is unavailable', 'ECONNREFUSED', undefined],
      ['error', 'the database of project a is unavailable', '3D000', undefined],
      ['info', 'the catalogue answers again', undefined, 100],
      ['error', 'the catalogue is unavailable', '57P03', undefined],
    ],
  )
  t.notOk(lines.some((line) => 'stack' in line), 'no stack trace')
})

/** The log lines `work` writes, at level info. */
async function logged(work: () => void | Promise<void>): Promise<Array<Record<string, unknown>>> {
  const lines: Array<Record<string, unknown>> = []
  const write = process.stderr.write.bind(process.stderr)
  const level = logLevel()
  setLogLevel('info')
  process.stderr.write = ((chunk: string) => {
    lines.push(JSON.parse(String(chunk)))
    return true
  }) as typeof process.stderr.write
  try {
    await work()
  } finally {
    process.stderr.write = write
    setLogLevel(level)
  }
  return lines
}

t.test('a lasting incident says so with a count, not a line per failure', async (t) => {
  const lines = await logged(async () => {
    const incidents = new Incidents(50)
    for (let i = 0; i < 10; i++) incidents.failed('the catalogue', coded('ECONNREFUSED', 'connect ECONNREFUSED'))
    await new Promise((resolve) => setTimeout(resolve, 60))
    for (let i = 0; i < 5; i++) incidents.failed('the catalogue', coded('ECONNREFUSED', 'connect ECONNREFUSED'))
    incidents.recovered('the catalogue')
  })
  t.same(
    lines.map((line) => [line.level, line.message, line.failures, line.failuresSinceLastLine]),
    [
      ['error', 'the catalogue is unavailable', undefined, undefined],
      ['info', 'the catalogue is still unavailable', 11, 10],
      ['info', 'the catalogue answers again', 15, undefined],
    ],
  )
  t.type(lines[1]!.since, 'string', 'since when, as a time')
})

t.test("a server's outage met by many projects' requests is one incident of that server", async (t) => {
  const server = { host: '10.0.0.7', port: 5432 }
  const lines = await logged(() => {
    for (let i = 0; i < 300; i++) {
      const failure = reportDatabaseFailure(coded('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.7:5432'), { ref: `p${i % 30}`, ...server }, 'rest request')
      if (failure !== 'unavailable') throw new Error(`classified ${failure}`)
    }
    // One project's own database gone is that project's incident, apart from its server's.
    reportDatabaseFailure(coded('3D000', 'database "bp_p1" does not exist'), { ref: 'p1', ...server }, 'rest request')
    databaseAnswered({ ref: 'p2', ...server })
    databaseAnswered({ ref: 'p1', ...server })
    // A statement out of time is the request's own: one short line, no stack.
    reportDatabaseFailure(Object.assign(coded('57014', 'canceling statement due to statement timeout'), { severity: 'ERROR' }), { ref: 'p3', ...server }, 'graphql request')
    // Anything else is no known outage: its stack is kept.
    reportDatabaseFailure(new TypeError('a bug'), { ref: 'p4', ...server }, 'rest request')
  })
  t.same(
    lines.map((line) => [line.level, line.message, line.failures]),
    [
      ['error', 'the database server 10.0.0.7:5432 is unavailable', undefined],
      ['error', 'the database of project p1 is unavailable', undefined],
      ['info', 'the database server 10.0.0.7:5432 answers again', 300],
      ['info', 'the database of project p1 answers again', 1],
      ['info', 'graphql request: a statement ran out of time', undefined],
      ['error', 'rest request failed', undefined],
    ],
  )
  t.same(lines.map((line) => 'stack' in line), [false, false, false, false, false, true], 'a stack only for what is no known outage')
})
