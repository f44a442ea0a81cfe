// Whether a local server listens yet: what the tests' and benches' child
// servers (nats-server, nginx) are polled with until they start.
import net from 'node:net'

/** True once a TCP connection to 127.0.0.1:`port` opens, false if it is refused. */
export function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}
