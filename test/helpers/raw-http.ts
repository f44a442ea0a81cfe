// HTTP/1.1 spoken by hand over one TCP connection, for what a client library
// hides: several requests written in one packet (pipelining), HEAD answers, a
// body split across packets.
import net from 'node:net'

export interface RawResponse {
  status: number
  /** Lower-case names. */
  headers: Record<string, string>
  body: string
}

export interface RawExchange {
  responses: RawResponse[]
  /** The server closed the connection (before `expect` answers, or after them). */
  closed: boolean
  /** Bytes after the last whole response: a body where none belonged shows here. */
  leftover: string
}

/** A request as bytes: `Host` and, for a body, `Content-Length` added. */
export function rawRequest(method: string, path: string, headers: Record<string, string> = {}, body = ''): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1']
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`)
  if (body !== '' || method === 'POST') lines.push(`Content-Length: ${Buffer.byteLength(body)}`)
  return `${lines.join('\r\n')}\r\n\r\n${body}`
}

/**
 * Writes each packet in turn on one connection (waiting `gapMillis` between
 * them, with `afterAnswers` until every request before it was answered, as a
 * client that does not pipeline, or with `beforePacket` until what it returns
 * settles, given the packet's index and the responses so far: a test that waits
 * for the server to be at some point) and reads until `expect` responses
 * arrived and `settleMillis` passed without more, or the server closed. `heads` marks which responses
 * answer a HEAD (they have no body, whatever their Content-Length says).
 */
export function exchange(
  port: number,
  packets: string[],
  options: { expect: number; heads?: boolean[]; gapMillis?: number; afterAnswers?: boolean; beforePacket?: (index: number, responses: RawResponse[]) => Promise<unknown>; settleMillis?: number; timeoutMillis?: number },
): Promise<RawExchange> {
  const { expect, heads = [], gapMillis = 50, afterAnswers = false, beforePacket, settleMillis = 200, timeoutMillis = 5000 } = options
  let sent = 0
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let buffer = Buffer.alloc(0)
    const responses: RawResponse[] = []
    let closed = false
    let settle: NodeJS.Timeout | undefined
    const finish = () => {
      clearTimeout(deadline)
      clearTimeout(settle)
      socket.destroy()
      resolve({ responses, closed, leftover: buffer.toString('latin1') })
    }
    const deadline = setTimeout(finish, timeoutMillis)
    const parse = () => {
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n')
        if (end === -1) return
        const head = buffer.subarray(0, end).toString('latin1').split('\r\n')
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head[0]!)?.[1])
        const headers: Record<string, string> = {}
        for (const line of head.slice(1)) {
          const colon = line.indexOf(':')
          headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
        }
        const length = heads[responses.length] ? 0 : Number(headers['content-length'] ?? 0)
        if (buffer.length < end + 4 + length) return
        responses.push({ status, headers, body: buffer.subarray(end + 4, end + 4 + length).toString('utf8') })
        buffer = buffer.subarray(end + 4 + length)
      }
    }
    const writeNext = () => {
      if (sent < packets.length && !socket.destroyed) socket.write(packets[sent++]!)
    }
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk])
      parse()
      if (afterAnswers && responses.length === sent) writeNext()
      if (responses.length >= expect) {
        clearTimeout(settle)
        settle = setTimeout(finish, settleMillis)
      }
    })
    socket.on('close', () => {
      closed = true
      finish()
    })
    socket.on('error', (error) => {
      clearTimeout(deadline)
      reject(error)
    })
    socket.on('connect', async () => {
      writeNext()
      if (afterAnswers) return
      try {
        while (sent < packets.length) {
          await (beforePacket ? beforePacket(sent, responses) : new Promise((done) => setTimeout(done, gapMillis)))
          writeNext()
        }
      } catch (error) {
        clearTimeout(deadline)
        socket.destroy()
        reject(error)
      }
    })
  })
}
