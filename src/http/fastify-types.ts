import type { AuthScheme, Caller } from '../auth/authenticate.js'
import type { RunWorker } from '../jobs/run-worker.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Credentials the route accepts; `none` for public routes. Platform routes default to x-auth-token. */
    auth?: AuthScheme | 'none'
    /** The route answers its own deadline (uploads roll back first, then answer 503). */
    ownsDeadline?: boolean
  }
  interface FastifyInstance {
    /** Executes this process's share of site runs; tests reach the queue and the stale-run sweep through it. */
    runWorker: RunWorker
  }
  interface FastifyRequest {
    caller: Caller | null
    /** Aborts when a stream request runs past STREAM_REQUEST_TIMEOUT_MS. */
    deadline: AbortSignal | null
  }
}
