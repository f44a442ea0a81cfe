// The client address every throttle counts (lib/http/client-address.ts): X-Forwarded-For is believed
// only from the proxies BASEPLANE_TRUSTED_PROXIES names, and only as far as they vouch for it.
import t from 'tap'
import { canonicalAddress, parseProxyRange, TrustedProxies, type ProxyRange } from '../../lib/http/client-address.ts'

const ranges = (...texts: string[]): ProxyRange[] => texts.map((text) => parseProxyRange(text)!)

t.test('without trusted proxies the peer is the client, whatever the header says', async (t) => {
  const none = new TrustedProxies([])
  t.equal(none.clientOf('127.0.0.1', '203.0.113.7'), '127.0.0.1')
  t.equal(none.clientOf('0000:0000:0000:0000:0000:0000:0000:0001', '203.0.113.7'), '::1', "uWebSockets.js's long IPv6 spelling is made canonical")
})

t.test('from a peer that is not a trusted proxy, the header is ignored', async (t) => {
  const proxies = new TrustedProxies(ranges('10.0.0.0/8'))
  t.equal(proxies.clientOf('198.51.100.4', '203.0.113.7'), '198.51.100.4')
  t.equal(proxies.clientOf('198.51.100.4', undefined), '198.51.100.4')
})

t.test('from a trusted proxy: the right-most entry that is not itself a trusted proxy', async (t) => {
  const proxies = new TrustedProxies(ranges('10.0.0.0/8', '127.0.0.1', 'fd00::/8'))
  t.equal(proxies.clientOf('127.0.0.1', '203.0.113.7'), '203.0.113.7', 'one proxy')
  t.equal(proxies.clientOf('127.0.0.1', '1.1.1.1, 203.0.113.7'), '203.0.113.7', 'what the client wrote itself (left of what the proxy appended) is not believed')
  t.equal(proxies.clientOf('127.0.0.1', '1.1.1.1, 203.0.113.7, 10.1.2.3'), '203.0.113.7', 'two proxies: the inner one is skipped')
  t.equal(proxies.clientOf('127.0.0.1', '10.9.9.9, 10.1.2.3'), '10.9.9.9', 'every entry a proxy: the left-most')
  t.equal(proxies.clientOf('127.0.0.1', ''), '127.0.0.1', 'an empty header: the proxy itself')
  t.equal(proxies.clientOf('127.0.0.1', undefined), '127.0.0.1', 'no header: the proxy itself (its own health checks)')
  t.equal(proxies.clientOf('::ffff:127.0.0.1', '203.0.113.7'), '203.0.113.7', 'an IPv4-mapped peer matches its IPv4 range')
  t.equal(proxies.clientOf('fd12::1', '2001:DB8:0:0::9'), '2001:db8::9', 'IPv6 ranges and entries, canonical')
  t.equal(proxies.clientOf('127.0.0.1', '203.0.113.7:4711'), '203.0.113.7', 'an entry with a port')
  t.equal(proxies.clientOf('127.0.0.1', '[2001:db8::9]:4711'), '2001:db8::9', 'a bracketed IPv6 entry with a port')
  t.equal(proxies.clientOf('127.0.0.1', '203.0.113.7, unknown'), 'unknown', 'an entry that is no address ends the walk, and is the client as written (never the proxy, whose address is everyone\'s)')
})

t.test('ranges and canonical addresses', async (t) => {
  t.same(parseProxyRange('10.0.0.0/8'), { family: 'ipv4', network: '10.0.0.0', prefix: 8 })
  t.same(parseProxyRange('::1'), { family: 'ipv6', network: '::1', prefix: 128 })
  for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/x', 'proxy', '300.1.1.1']) t.equal(parseProxyRange(bad), undefined, bad)
  t.equal(canonicalAddress('0000:0000:0000:0000:0000:ffff:7f00:0001'), '127.0.0.1')
  t.equal(canonicalAddress('203.0.113.7'), '203.0.113.7')
})

t.test('the start banner names the trusted proxies, and with uWebSockets.js that they must speak HTTP/1.1', async (t) => {
  const { proxyLines } = await import('../../cli/commands/start-proxies.ts')
  t.same(proxyLines({ trustedProxies: [], httpEngine: 'uws' }), [], 'nothing without proxies')
  const uws = proxyLines({ trustedProxies: ranges('10.0.0.0/8', '::1'), httpEngine: 'uws' })
  t.match(uws[0], /^proxies +10\.0\.0\.0\/8, ::1 /)
  t.match(uws[1], /proxy_http_version 1\.1.*505/)
  t.equal(proxyLines({ trustedProxies: ranges('10.0.0.1'), httpEngine: 'node' }).length, 1, 'node:http accepts HTTP/1.0: no warning')
})
