// A TCP forwarder that stands between the platform and a PostgreSQL server, to
// make that server go away and come back: down() refuses new connections and
// cuts the open ones (as a server that died), up() forwards again.
import net from 'node:net'

export interface Forwarder {
  port: number
  /** The same URL, through the forwarder. */
  via(url: string): string
  down(): Promise<void>
  up(): Promise<void>
  close(): Promise<void>
}

export async function startForwarder(targetPort: number, host = '127.0.0.1'): Promise<Forwarder> {
  const sockets = new Set<net.Socket>()
  let server: net.Server | undefined
  let port = 0
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = net.createServer((client) => {
        const upstream = net.connect(targetPort, host)
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.on('close', () => sockets.delete(socket))
          socket.on('error', () => {
            client.destroy()
            upstream.destroy()
          })
        }
        client.pipe(upstream).pipe(client)
      })
      next.once('error', reject)
      next.listen(port, host, () => {
        port = (next.address() as net.AddressInfo).port
        server = next
        resolve()
      })
    })
  const down = async () => {
    const closing = server
    server = undefined
    for (const socket of sockets) socket.destroy()
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()))
  }
  await listen()
  return {
    get port() {
      return port
    },
    via: (url) => {
      const parsed = new URL(url)
      parsed.port = String(port)
      return parsed.toString()
    },
    down,
    up: () => (server ? Promise.resolve() : listen()),
    close: down,
  }
}
