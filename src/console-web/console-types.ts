import type { ConsoleSession } from '../accounts/console-sessions.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may open a console page: anyone, a signed-in account (the default), or the operator. */
    console?: 'public' | 'account' | 'operator'
  }
  interface FastifyRequest {
    /** The console session of the request's cookie, when it names a live one. */
    consoleSession: ConsoleSession | undefined
    /** The key that signs the console's cookies (read once from the database). */
    consoleCookieKey: string | null
  }
}
