import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'

/** Starts the app listening on a free port of 127.0.0.1, for clients that need a real socket; returns the port. */
export async function listenOnFreePort(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return (app.server.address() as AddressInfo).port
}
