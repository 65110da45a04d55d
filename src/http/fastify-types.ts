// What the interfaces add to Fastify's request; the caller and `config.auth` are declared beside
// the caller, in src/auth/caller.ts.
declare module 'fastify' {
  interface FastifyRequest {
    /** Aborts when a stream request runs past STREAM_REQUEST_TIMEOUT_MS, or its client goes away. */
    deadline: AbortSignal | null
  }
}

export {}
