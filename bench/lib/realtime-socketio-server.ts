// bench:realtime's socket.io peer in a process of its own: socket.io 4 on
// node:http, websocket transport only (the clients ask for nothing else).
// A subscriber asks to join the room and is answered once it has; the
// publisher's emit goes to the room, itself left out, as Baseplane leaves
// out a broadcast's sender.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { importPeer } from './peers.ts'
import { childArg, tellParent } from './realtime-process.ts'
import { EVENT, ROOM } from './realtime-wire.ts'

/** What the peer uses of socket.io (it lives in bench/peers, outside the type-checked tree). */
interface ServerSocket {
  on(event: string, listener: (...args: never[]) => void): void
  join(room: string): void
  to(room: string): { emit(event: string, ...args: unknown[]): void }
}
interface SocketIo {
  Server: new (server: http.Server, options: Record<string, unknown>) => { on(event: 'connection', listener: (socket: ServerSocket) => void): void }
}

childArg<null>()
const { Server } = await importPeer<SocketIo>('socket.io')
const server = http.createServer()
const io = new Server(server, { transports: ['websocket'], serveClient: false })
io.on('connection', (socket) => {
  socket.on('join', (room: string, answer: (status: string) => void) => {
    socket.join(room)
    answer('ok')
  })
  socket.on('pub', (payload: unknown) => socket.to(ROOM).emit(EVENT, payload))
})
server.listen(0, '127.0.0.1', () => tellParent({ type: 'listening', port: (server.address() as AddressInfo).port }))
