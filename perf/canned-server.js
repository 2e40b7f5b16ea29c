#!/usr/bin/env node
// A server faster than any one load generator: a raw socket that answers every read with the same 2-byte HTTP answer,
// no parsing, no framework. Against it a generator runs as fast as its own core lets it (the wall one generator process
// is: perf/generator-cost.js; --load-procs auto asking for a second generator: test/generators.test.js). Listens on a
// free port of loopback and prints it; run it pinned (taskset) to keep it off the generator's core.
import net from 'node:net'

const ANSWER = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'
const server = net.createServer(s => {
  s.setNoDelay(true)
  s.on('error', () => {})
  s.on('data', () => s.write(ANSWER))
})
server.listen(0, '127.0.0.1', () => console.log(/** @type {net.AddressInfo} */ (server.address()).port))
