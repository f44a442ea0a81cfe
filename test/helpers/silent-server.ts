// A server that accepts connections and never answers: a PostgreSQL that
// hangs, as a stalled link or a frozen server looks to a client.
import net from 'node:net'

/** Listens on 127.0.0.1 until `t` ends; answers its port and how many connections it has accepted. */
export async function silentServer(t: { teardown(fn: () => unknown): void }): Promise<{ port: number; accepted: () => number }> {
  const sockets: net.Socket[] = []
  const silent = net.createServer((socket) => sockets.push(socket))
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    for (const socket of sockets) socket.destroy()
    silent.close()
  })
  return { port: (silent.address() as net.AddressInfo).port, accepted: () => sockets.length }
}
