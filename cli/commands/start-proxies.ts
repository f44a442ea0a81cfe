// The start banner's lines about the reverse proxies in front of the node. A proxy that speaks
// HTTP/1.0 to uWebSockets.js (nginx's default) gets 505 for every request, answered by the engine's
// parser where no log of ours sees it, so the banner names the cause where an operator looks first.
import type { PlatformConfig } from '../../lib/config.ts'
import { proxyRangeText } from '../../lib/http/client-address.ts'

export function proxyLines(config: Pick<PlatformConfig, 'trustedProxies' | 'httpEngine'>): string[] {
  if (config.trustedProxies.length === 0) return []
  const lines = [`proxies           ${config.trustedProxies.map(proxyRangeText).join(', ')}  (the client from their X-Forwarded-For)`]
  if (config.httpEngine === 'uws') {
    lines.push('                  they must speak HTTP/1.1 to this node (nginx: proxy_http_version 1.1): uWebSockets.js answers HTTP/1.0 with 505')
  }
  return lines
}
