// bench:realtime's limit: a bare uWebSockets.js server in a process of its
// own, no Baseplane code. Every subscriber is subscribed to one topic as it
// opens; a frame from the publisher is published to the topic as it came
// (the harness sends it the bytes Baseplane sends its subscribers). The
// socket settings Baseplane's realtime socket sets (largest frame, 1 MB
// waiting per socket, 60 s silence) are the same here, so both drop or keep
// the same frames.
import uWS from '@based/uws'
import { childArg, tellParent } from './realtime-process.ts'
import { TOPIC } from './realtime-wire.ts'

childArg<null>()
const app = uWS.App()
app.ws<{ publisher: boolean }>('/*', {
  compression: uWS.DISABLED,
  maxPayloadLength: 3 * 1024 * 1024,
  maxBackpressure: 1024 * 1024,
  idleTimeout: 60,
  upgrade: (res, req, context) => {
    res.upgrade(
      { publisher: req.getQuery('role') === 'pub' },
      req.getHeader('sec-websocket-key'),
      req.getHeader('sec-websocket-protocol'),
      req.getHeader('sec-websocket-extensions'),
      context,
    )
  },
  open: (ws) => {
    if (!ws.getUserData().publisher) ws.subscribe(TOPIC)
  },
  message: (ws, message, isBinary) => {
    if (ws.getUserData().publisher) app.publish(TOPIC, message, isBinary)
  },
})
app.listen('127.0.0.1', 0, (listening) => {
  if (!listening) throw new Error('the bare uWS server could not listen')
  tellParent({ type: 'listening', port: uWS.us_socket_local_port(listening) })
})
