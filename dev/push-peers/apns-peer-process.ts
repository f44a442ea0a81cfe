// The APNs stand-in in a process of its own (the benchmark: a remote service
// should not share the sender's event loop). Prints its URL; reads
// "latency <ms>" lines on stdin.
import crypto from 'node:crypto'
import readline from 'node:readline'
import { startApnsPeer } from './apns-peer.ts'

const peer = await startApnsPeer({
  teamId: process.env.APNS_TEAM_ID!,
  keyId: process.env.APNS_KEY_ID!,
  publicKey: crypto.createPublicKey(process.env.APNS_PUBLIC_KEY!),
  topic: process.env.APNS_TOPIC!,
  maxStreams: Number(process.env.APNS_MAX_STREAMS ?? 1000),
})
process.stdout.write(`${peer.url}\n`)
for await (const line of readline.createInterface({ input: process.stdin })) {
  const [command, value] = line.split(' ')
  if (command === 'latency') {
    peer.setLatency(Number(value))
    process.stdout.write('ok\n')
  }
}
await peer.close()
