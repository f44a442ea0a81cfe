// The client's address as every throttle of the platform counts it. Behind a
// reverse proxy every request arrives from the proxy, so the client is named
// in X-Forwarded-For, which anyone can also write: it is read only when the
// peer is one of the proxies the operator listed (BASEPLANE_TRUSTED_PROXIES),
// and then only as far as those proxies vouch for it.
import { BlockList, isIPv4, isIPv6, SocketAddress } from 'node:net'

/** One entry of BASEPLANE_TRUSTED_PROXIES, checked: an address (a range of one) or a CIDR range. */
export interface ProxyRange {
  family: 'ipv4' | 'ipv6'
  /** The network's address in canonical form (IPv6 compressed and lower-case). */
  network: string
  prefix: number
}

/** The range `text` names ("10.0.0.7", "10.0.0.0/8", "fd00::/8", "::1"), or undefined when it names none. */
export function parseProxyRange(text: string): ProxyRange | undefined {
  const slash = text.indexOf('/')
  const address = slash === -1 ? text : text.slice(0, slash)
  const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined
  if (family === undefined) return undefined
  const bits = family === 'ipv4' ? 32 : 128
  const prefixText = slash === -1 ? String(bits) : text.slice(slash + 1)
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > bits) return undefined
  return { family, network: new SocketAddress({ address, family }).address, prefix: Number(prefixText) }
}

/** A range as an operator writes it: the address alone when the range is one address. */
export function proxyRangeText(range: ProxyRange): string {
  return range.prefix === (range.family === 'ipv4' ? 32 : 128) ? range.network : `${range.network}/${range.prefix}`
}

/** `text` as one spelling per address: IPv6 compressed and lower-case, IPv4-mapped IPv6 as IPv4; anything else as given. */
export function canonicalAddress(text: string): string {
  // IPv4 (the common case) is already canonical; only IPv6 has several spellings.
  if (!text.includes(':') || !isIPv6(text)) return text
  const address = new SocketAddress({ address: text, family: 'ipv6' }).address
  return address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address
}

/** An X-Forwarded-For entry as an address: some proxies add the port ("192.0.2.1:4711", "[2001:db8::1]:4711"). */
function hopAddress(entry: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(entry)
  if (bracketed) return canonicalAddress(bracketed[1]!)
  const withPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(entry)
  return canonicalAddress(withPort ? withPort[1]! : entry)
}

export class TrustedProxies {
  readonly #list = new BlockList()
  readonly #empty: boolean

  constructor(ranges: readonly ProxyRange[]) {
    for (const range of ranges) this.#list.addSubnet(range.network, range.prefix, range.family)
    this.#empty = ranges.length === 0
  }

  /** Whether `address` (canonical) is one of the configured proxies. BlockList matches IPv4-mapped IPv6 against IPv4 ranges. */
  trusts(address: string): boolean {
    if (this.#empty) return false
    const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined
    return family !== undefined && this.#list.check(address, family)
  }

  /**
   * The client of a request from `peer` carrying `forwardedFor`: the peer itself unless it is a
   * trusted proxy; else the right-most X-Forwarded-For entry that is not itself a trusted proxy
   * (each proxy appends the address it saw, so entries left of an untrusted one are the client's
   * own say). An entry that is not an address ends the walk and is the client as written, so no
   * proxy's address (everyone's behind it) takes the blame for an odd value; the throttle counts
   * a key that cannot be shared on this process only (throttle.ts).
   */
  clientOf(peer: string, forwardedFor: string | undefined): string {
    const from = canonicalAddress(peer)
    if (forwardedFor === undefined || !this.trusts(from)) return from
    let client = from
    const hops = forwardedFor.split(',')
    for (let i = hops.length - 1; i >= 0; i--) {
      const entry = hops[i]!.trim()
      if (entry === '') continue
      const hop = hopAddress(entry)
      if (!isIPv4(hop) && !isIPv6(hop)) return entry
      if (!this.trusts(hop)) return hop
      client = hop
    }
    return client
  }
}
