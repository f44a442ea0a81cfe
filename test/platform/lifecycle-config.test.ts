// The configuration of pause, wake and the operator webhook (issue 27 items 4
// and 5): defaults (everything off), what fractions of a day give, and one
// exact message per bad setting.
import crypto from 'node:crypto'
import t from 'tap'
import { loadConfig } from '../../lib/config.ts'
import { webhookSecretBytes, webhookSignature } from '../../lib/webhooks.ts'

const SECRET = `whsec_${crypto.randomBytes(24).toString('base64')}`

t.test('defaults: no pause, no wake, no webhook', async (t) => {
  t.same(loadConfig({}).lifecycle, {
    pauseIdleDays: undefined,
    pauseIdleMillis: undefined,
    pauseSweepMillis: 600_000,
    activityFlushMillis: 60_000,
    wakeOnRequest: false,
    wakeWaitMillis: 10_000,
    operatorWebhook: undefined,
  })
  t.equal(loadConfig({ BASEPLANE_PAUSE_IDLE_DAYS: '0' }).lifecycle.pauseIdleMillis, undefined, '0 is off')
})

t.test('the idle time, in days with fractions, and what it sets the pace of', async (t) => {
  t.match(loadConfig({ BASEPLANE_PAUSE_IDLE_DAYS: '7' }).lifecycle, { pauseIdleDays: 7, pauseIdleMillis: 7 * 86_400_000, pauseSweepMillis: 600_000, activityFlushMillis: 60_000 })
  t.match(loadConfig({ BASEPLANE_PAUSE_IDLE_DAYS: '0.5' }).lifecycle, { pauseIdleMillis: 43_200_000 })
  t.match(loadConfig({ BASEPLANE_PAUSE_IDLE_DAYS: String(3 / 86400) }).lifecycle, { pauseIdleMillis: 3000, pauseSweepMillis: 1000, activityFlushMillis: 300 }, 'a short idle time (tests) sweeps and writes more often')
  t.match(loadConfig({ BASEPLANE_WAKE_ON_REQUEST: 'true', BASEPLANE_WAKE_WAIT_MS: '2500' }).lifecycle, { wakeOnRequest: true, wakeWaitMillis: 2500 })
  t.same(loadConfig({ BASEPLANE_OPERATOR_WEBHOOK_URL: 'https://ops.example/hooks', BASEPLANE_OPERATOR_WEBHOOK_SECRET: SECRET }).lifecycle.operatorWebhook, {
    url: 'https://ops.example/hooks',
    secret: SECRET,
  })
})

t.test('each bad setting has its own message', async (t) => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ BASEPLANE_PAUSE_IDLE_DAYS: 'a week' }, 'BASEPLANE_PAUSE_IDLE_DAYS must be a number of days from 0 (off) to 3650, fractions allowed (0.5 is 12 hours), got "a week"'],
    [{ BASEPLANE_PAUSE_IDLE_DAYS: '-1' }, 'BASEPLANE_PAUSE_IDLE_DAYS must be a number of days from 0 (off) to 3650, fractions allowed (0.5 is 12 hours), got "-1"'],
    [{ BASEPLANE_PAUSE_IDLE_DAYS: '4000' }, 'BASEPLANE_PAUSE_IDLE_DAYS must be a number of days from 0 (off) to 3650, fractions allowed (0.5 is 12 hours), got "4000"'],
    [{ BASEPLANE_WAKE_ON_REQUEST: 'sometimes' }, 'BASEPLANE_WAKE_ON_REQUEST must be true or false, got "sometimes"'],
    [{ BASEPLANE_WAKE_WAIT_MS: '500' }, 'BASEPLANE_WAKE_WAIT_MS must be between 1000 and 60000, got 500'],
    [{ BASEPLANE_OPERATOR_WEBHOOK_URL: 'ftp://ops.example', BASEPLANE_OPERATOR_WEBHOOK_SECRET: SECRET }, 'BASEPLANE_OPERATOR_WEBHOOK_URL must be an http:// or https:// URL, got "ftp://ops.example"'],
    [
      { BASEPLANE_OPERATOR_WEBHOOK_URL: 'https://ops.example/hooks' },
      'BASEPLANE_OPERATOR_WEBHOOK_URL is set: set BASEPLANE_OPERATOR_WEBHOOK_SECRET too ("whsec_<base64 of at least 16 bytes>"), with which each event is signed',
    ],
    [{ BASEPLANE_OPERATOR_WEBHOOK_SECRET: SECRET }, 'BASEPLANE_OPERATOR_WEBHOOK_SECRET is set without BASEPLANE_OPERATOR_WEBHOOK_URL'],
    [
      { BASEPLANE_OPERATOR_WEBHOOK_URL: 'https://ops.example/hooks', BASEPLANE_OPERATOR_WEBHOOK_SECRET: 'whsec_c2hvcnQ=' },
      'BASEPLANE_OPERATOR_WEBHOOK_SECRET must be a Standard Webhooks secret "whsec_<base64 of at least 16 bytes>"',
    ],
  ]
  for (const [env, message] of cases) t.throws(() => loadConfig(env), { code: 'invalid_config', message }, Object.keys(env).join(' '))
})

t.test('Standard Webhooks: the secret forms, and the signature a receiver checks', async (t) => {
  const bytes = crypto.randomBytes(32)
  t.same(webhookSecretBytes(`whsec_${bytes.toString('base64')}`), bytes)
  t.same(webhookSecretBytes(`v1,whsec_${bytes.toString('base64')}`), bytes, "GoTrue's form too")
  t.equal(webhookSecretBytes('whsec_!!'), undefined)
  t.equal(webhookSecretBytes(bytes.toString('base64')), undefined, 'the prefix is required')
  const expected = crypto.createHmac('sha256', bytes).update('msg_1.1700000000.{"a":1}').digest('base64')
  t.equal(webhookSignature([bytes], 'msg_1', 1700000000, '{"a":1}'), `v1,${expected}`)
})
