import t from 'tap'
import { loadConfig } from '../../lib/config.ts'
import { Throttle } from '../../data-plane/throttle.ts'

t.test('defaults', async (t) => {
  const config = loadConfig({}, '/srv/app')
  t.match(config, {
    databaseUrl: undefined,
    home: '/srv/app/.baseplane',
    host: '127.0.0.1',
    port: 8000,
    publicUrl: 'http://127.0.0.1:8000',
    throttle: { maxFailures: 30, windowSeconds: 300, blockSeconds: 300 },
    smtpUrl: undefined,
    catalogueSilenceMillis: 0,
  })
  t.ok(Object.isFrozen(config) && Object.isFrozen(config.throttle), 'config is frozen')
})

t.test('each bad setting has its own message', async (t) => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ PORT: 'eighty' }, 'PORT must be a whole number, got "eighty"'],
    [{ PORT: '70000' }, 'PORT must be between 0 and 65535, got 70000'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL must be a postgres:// URL'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL must be a URL, got "not a url"'],
    [{ BASEPLANE_BASE_DOMAIN: 'bad domain!' }, 'BASEPLANE_BASE_DOMAIN must be a host name such as "example.com", got "bad domain!"'],
    [{ BASEPLANE_ADMIN_TOKEN: 'short' }, 'BASEPLANE_ADMIN_TOKEN must be at least 32 characters'],
    [
      { BASEPLANE_TRUSTED_PROXY_HEADER: 'x-forwarded-for' },
      'BASEPLANE_TRUSTED_PROXY_HEADER is no longer read: set BASEPLANE_TRUSTED_PROXIES to the addresses or ranges of your reverse proxies (e.g. "10.0.0.0/8, ::1"); X-Forwarded-For is read only from them',
    ],
    [{ BASEPLANE_TRUSTED_PROXIES: '10.0.0.0/8, proxy.internal' }, 'BASEPLANE_TRUSTED_PROXIES must list IP addresses or CIDR ranges (e.g. "10.0.0.0/8, ::1"), got "proxy.internal"'],
    [{ BASEPLANE_TRUSTED_PROXIES: '10.0.0.0/33' }, 'BASEPLANE_TRUSTED_PROXIES must list IP addresses or CIDR ranges (e.g. "10.0.0.0/8, ::1"), got "10.0.0.0/33"'],
    [{ BASEPLANE_LOG_LEVEL: 'loud' }, 'BASEPLANE_LOG_LEVEL must be one of silent, info, debug; got "loud"'],
    [{ BASEPLANE_THROTTLE_MAX_FAILURES: '0' }, 'BASEPLANE_THROTTLE_MAX_FAILURES must be between 1 and 1000000, got 0'],
    [{ BASEPLANE_CATALOGUE_SILENCE_MS: '2000' }, 'BASEPLANE_CATALOGUE_SILENCE_MS must be 0 (off) or between 3000 and 600000, got 2000'],
    [{ SMTP_URL: 'http://mail' }, 'SMTP_URL must look like smtp://user:pass@host:587 or smtps://host:465, got "http://mail"'],
    [{ BASEPLANE_MAIL_FROM: 'nobody' }, 'BASEPLANE_MAIL_FROM must be an email address such as "App <no-reply@example.com>", got "nobody"'],
    [{ BASEPLANE_NATS_URL: 'http://nats:4222' }, 'BASEPLANE_NATS_URL must be nats:// (or tls://) URLs separated by commas, such as "nats://10.0.0.5:4222", got "http://nats:4222"'],
    [{ BASEPLANE_NATS_URL: 'nats://user:secret@a:4222,b' }, 'BASEPLANE_NATS_URL must be nats:// (or tls://) URLs separated by commas, such as "nats://10.0.0.5:4222", got "b"'],
    [{ BASEPLANE_NATS_URL: 'nats://user:secret@:4222' }, 'BASEPLANE_NATS_URL must be nats:// (or tls://) URLs separated by commas, such as "nats://10.0.0.5:4222", got "nats://***@:4222"'],
  ]
  for (const [env, message] of cases) t.throws(() => loadConfig(env), { code: 'invalid_config', message }, Object.keys(env)[0])
})

t.test('BASEPLANE_NATS_URL: none by default (one node); one URL, or several of one NATS cluster', async (t) => {
  t.equal(loadConfig({}).natsServers, undefined)
  t.same(loadConfig({ BASEPLANE_NATS_URL: 'nats://10.0.0.5:4222' }).natsServers, ['nats://10.0.0.5:4222'])
  t.same(loadConfig({ BASEPLANE_NATS_URL: 'nats://u:p@a:4222, tls://b:4222' }).natsServers, ['nats://u:p@a:4222', 'tls://b:4222'])
})

t.test('BASEPLANE_TRUSTED_PROXIES: addresses and ranges, IPv4 and IPv6, by commas or spaces', async (t) => {
  t.same(loadConfig({}).trustedProxies, [], 'none by default: the peer is the client')
  t.same(loadConfig({ BASEPLANE_TRUSTED_PROXIES: '10.0.0.7, 172.16.0.0/12 2001:DB8::/32,::1' }).trustedProxies, [
    { family: 'ipv4', network: '10.0.0.7', prefix: 32 },
    { family: 'ipv4', network: '172.16.0.0', prefix: 12 },
    { family: 'ipv6', network: '2001:db8::', prefix: 32 },
    { family: 'ipv6', network: '::1', prefix: 128 },
  ])
})

t.test('throttle: refuses after the threshold, per project and address, then lets go', async (t) => {
  let now = 1_000_000
  const throttle = new Throttle({ maxFailures: 3, windowSeconds: 60, blockSeconds: 30 }, () => now)
  throttle.recordFailure('a', '10.0.0.1')
  throttle.recordFailure('a', '10.0.0.1')
  t.equal(throttle.retryAfter('a', '10.0.0.1'), 0)
  throttle.recordFailure('a', '10.0.0.1')
  t.equal(throttle.retryAfter('a', '10.0.0.1'), 30)
  t.equal(throttle.retryAfter('a', '10.0.0.2'), 0, 'another address is not refused')
  t.equal(throttle.retryAfter('b', '10.0.0.1'), 0, 'another project is not refused')
  now += 29_500
  t.equal(throttle.retryAfter('a', '10.0.0.1'), 1)
  now += 1000
  t.equal(throttle.retryAfter('a', '10.0.0.1'), 0, 'the block ends')
  throttle.recordFailure('a', '10.0.0.3')
  throttle.recordFailure('a', '10.0.0.3')
  now += 61_000
  throttle.recordFailure('a', '10.0.0.3')
  t.equal(throttle.retryAfter('a', '10.0.0.3'), 0, 'failures outside the window do not add up')
})
