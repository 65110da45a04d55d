import type { AuthScheme, Caller } from '../auth/authenticate.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Credentials the route accepts; `none` for public routes. Platform routes default to x-auth-token. */
    auth?: AuthScheme | 'none'
  }
  interface FastifyRequest {
    caller: Caller | null
    /** Aborts when a stream request runs past STREAM_REQUEST_TIMEOUT_MS, or its client goes away. */
    deadline: AbortSignal | null
  }
}
