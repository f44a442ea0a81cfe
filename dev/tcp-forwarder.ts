// A TCP forwarder that stands between the platform and a PostgreSQL server, to
// make that server go away and come back: down() refuses new connections and
// cuts the open ones (as a server that died), stall() keeps every connection
// open and accepts new ones but forwards nothing either way (as a link or a
// server that hangs: no reset, no answer), up() forwards again.
import net from 'node:net'

export interface Forwarder {
  port: number
  /** The same URL, through the forwarder. */
  via(url: string): string
  down(): Promise<void>
  /** Nothing more crosses, in either direction, until up(); connections stay open and new ones are accepted. */
  stall(): void
  /** Forwards again: after down(), listens again; after stall(), passes on what waited. */
  up(): Promise<void>
  close(): Promise<void>
}

interface Link {
  client: net.Socket
  upstream: net.Socket
}

export async function startForwarder(targetPort: number, host = '127.0.0.1'): Promise<Forwarder> {
  const sockets = new Set<net.Socket>()
  const links = new Set<Link>()
  let server: net.Server | undefined
  let port = 0
  let stalled = false
  // Paused sockets read nothing more: what the other side sends waits in the
  // kernel's buffers (then its sender's), as on a link that stopped passing packets.
  const hold = ({ client, upstream }: Link) => {
    client.unpipe(upstream)
    upstream.unpipe(client)
    client.pause()
    upstream.pause()
  }
  const pass = ({ client, upstream }: Link) => {
    client.pipe(upstream).pipe(client)
  }
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = net.createServer((client) => {
        const upstream = net.connect(targetPort, host)
        const link = { client, upstream }
        links.add(link)
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.on('close', () => {
            sockets.delete(socket)
            links.delete(link)
          })
          socket.on('error', () => {
            client.destroy()
            upstream.destroy()
          })
        }
        if (stalled) hold(link)
        else pass(link)
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
    stall: () => {
      if (stalled) return
      stalled = true
      for (const link of links) hold(link)
    },
    up: () => {
      if (stalled) {
        stalled = false
        for (const link of links) pass(link)
      }
      return server ? Promise.resolve() : listen()
    },
    close: async () => {
      stalled = false
      await down()
    },
  }
}
