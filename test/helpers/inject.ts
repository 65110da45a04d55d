import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'

/** An injected request's response, with its body as text and a typed json(). */
export type Response = LightMyRequestResponse & { body: string; json: <T = Record<string, unknown>>() => T }

/** Requests injected into the app, answered as Response. */
export function jsonRequest(app: FastifyInstance): (options: InjectOptions) => Promise<Response> {
  return (options) => app.inject(options) as Promise<Response>
}
