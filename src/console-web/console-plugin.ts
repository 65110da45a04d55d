import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import cookie from '@fastify/cookie'
import formbody from '@fastify/formbody'
import { MAX_JSON_BODY_BYTES } from '../http/json-body.js'
import { consoleCookieKey, findConsoleSession, operatorMark, sessionCredentialIsLive, type ConsoleSession } from '../accounts/console-sessions.js'
import { AppError } from '../errors.js'
import type { Actor } from '../activity/request-scope.js'
import { sameSecret } from '../auth/secrets.js'
import type { ConsoleDeps } from './deps.js'
import { html } from './html.js'
import { page } from './layout.js'
import { SESSION_COOKIE } from './session-cookie.js'
import { unsignedValue } from './session-cookie-signature.js'
import { assetRoutes } from './asset-routes.js'
import { sessionRoutes } from './session-routes.js'
import { overviewRoutes } from './overview-routes.js'
import { sitePageRoutes } from './site-page-routes.js'
import { diagnosticsPageRoutes } from './diagnostics-page-routes.js'
import { runActionRoutes } from './run-action-routes.js'
import { channelReleaseRoutes } from './channel-release-routes.js'
import { productPageRoutes } from './product-page-routes.js'
import { streamPageRoutes } from './stream-page-routes.js'
import { webhookPageRoutes } from './webhook-page-routes.js'
import { operatorRoutes } from './operator-routes.js'
import { rulePageRoutes } from './rule-page-routes.js'
import { ruleEditorRoutes } from './rule-editor-routes.js'
import { activityPageRoutes } from './activity-page-routes.js'
import { deliveryPageRoutes } from './delivery-page-routes.js'

// Pages run no inline script and load nothing from elsewhere: every asset is served here.
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

/**
 * The console (docs/design.md section 10): HTML pages under /console from this process, calling the same
 * domain functions as the API and showing exactly what the signed-in account may see. Sessions are
 * rows in Postgres named by a signed HttpOnly, SameSite=Strict cookie; every form that writes carries
 * the session's CSRF token.
 */
export const consolePlugin: FastifyPluginAsync<ConsoleDeps> = async (app, deps) => {
  await app.register(cookie)
  // The signing key is read when the first console request needs it, not at start: a server whose
  // database is unreachable still starts (and says so on /healthz).
  let key: Promise<string> | undefined
  const cookieKey = () => {
    key ??= consoleCookieKey(deps.db).catch((error: unknown) => {
      key = undefined
      throw error
    })
    return key
  }
  app.decorateRequest('consoleCookieKey', null)
  // A form carries what the platform interface takes in a JSON body (a rule with a map of 1,000
  // entries, say), percent-encoded: up to three bytes sent for each byte of text.
  await app.register(formbody, { bodyLimit: 3 * MAX_JSON_BODY_BYTES })

  app.addHook('onRequest', async (request, reply) => {
    reply.header('content-security-policy', CONTENT_SECURITY_POLICY)
    reply.header('x-content-type-options', 'nosniff')
    reply.header('referrer-policy', 'same-origin')
    // A page shows an account's data: never kept by the browser, so that Back after signing out
    // shows none of it (the assets set their own, src/console-web/asset-routes.ts).
    reply.header('cache-control', 'no-store')
    request.consoleCookieKey = await cookieKey()
    const signed = request.cookies[SESSION_COOKIE]
    const id = signed ? unsignedValue(signed, request.consoleCookieKey) : undefined
    const session = id ? await findConsoleSession(deps.db, id, deps.clock()) : undefined
    request.consoleSession = session && (await stillValid(deps, session)) ? session : undefined
    request.actor = request.consoleSession ? consoleActor(request.consoleSession) : null
    await guard(request, reply)
  })

  // Every form that writes carries the session's token (a synchronizer token): another site cannot
  // post one, even where a browser would send the cookie.
  app.addHook('preHandler', async (request) => {
    if (request.method !== 'POST' || request.routeOptions.config.console === 'public') return
    const sent = (request.body as { _csrf?: unknown } | undefined)?._csrf
    const session = request.consoleSession
    if (!session || typeof sent !== 'string' || !sameSecret(sent, session.csrfToken)) {
      throw new AppError(403, 'The form has expired or did not come from this console; reload the page and try again', 'forbidden')
    }
  })

  app.setErrorHandler((thrown, request, reply) => consoleErrorPage(thrown, request, reply))
  await app.register(
    async (scope: FastifyInstance) => {
      scope.setNotFoundHandler((request, reply) => consoleErrorPage(new AppError(404, 'There is no such page', 'not_found'), request, reply))
    },
    { prefix: '/console' },
  )

  await app.register(assetRoutes)
  await app.register(sessionRoutes, deps)
  await app.register(overviewRoutes, deps)
  await app.register(sitePageRoutes, deps)
  await app.register(diagnosticsPageRoutes, deps)
  await app.register(runActionRoutes, deps)
  await app.register(channelReleaseRoutes, deps)
  await app.register(productPageRoutes, deps)
  await app.register(streamPageRoutes, deps)
  await app.register(webhookPageRoutes, deps)
  await app.register(operatorRoutes, deps)
  await app.register(rulePageRoutes, deps)
  await app.register(ruleEditorRoutes, deps)
  await app.register(activityPageRoutes, deps)
  await app.register(deliveryPageRoutes, deps)
}

/** A session lasts only while what signed it in does: the account's credential, or the operator token. */
async function stillValid(deps: ConsoleDeps, session: ConsoleSession): Promise<boolean> {
  if (session.operator) {
    const token = deps.config.CONSOLE_OPERATOR_TOKEN
    return token !== undefined && session.credentialId === operatorMark(token)
  }
  return sessionCredentialIsLive(deps.db, session)
}

/** Who the activity log says made a console change: the operator, or a session and the credential that signed it in. */
function consoleActor(session: ConsoleSession): Actor {
  if (session.operator) return { type: 'operator', id: 'operator', label: 'operator (console)' }
  const [kind, id = ''] = session.credentialId.split(':')
  const signedInWith = kind === 'platform' ? `platform credential ${id}` : `token ${id}`
  return { type: 'console', id: session.credentialId, label: `console, signed in with ${signedInWith}` }
}

/** Pages of an account need a session of one, the operator's pages an operator session. */
async function guard(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const needs = request.routeOptions.config.console ?? 'account'
  if (needs === 'public' || request.is404) return
  const session = request.consoleSession
  const allowed = needs === 'operator' ? session?.operator === true : session?.accountId != null
  if (allowed) return
  if (session && needs === 'account') return reply.redirect('/console/operator', 303)
  if (session && needs === 'operator')
    throw new AppError(403, 'The operator view needs a sign-in with the operator token (CONSOLE_OPERATOR_TOKEN)', 'forbidden')
  if (request.method === 'GET') return reply.redirect(`/console/sign-in?next=${encodeURIComponent(request.url)}`, 303)
  throw new AppError(401, 'Sign in first', 'unauthorized')
}

/** A console page saying what went wrong: the message of a client's mistake, never the detail of a server error. */
export function consoleErrorPage(thrown: unknown, request: FastifyRequest, reply: FastifyReply) {
  const known =
    thrown instanceof AppError || (typeof (thrown as { statusCode?: unknown })?.statusCode === 'number' && (thrown as { statusCode: number }).statusCode < 500)
  const status = known ? ((thrown as { statusCode: number }).statusCode ?? 500) : 500
  if (status >= 500) request.log.error({ err: thrown }, 'console page failed')
  const message = status >= 500 ? 'Something went wrong on our side; the error is in the server log.' : (thrown as Error).message
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .send(refusalPage(status, message, request.consoleSession))
}

/** The page of a refusal: what went wrong and the way back to the overview (also for requests Node's parser refuses). */
export function refusalPage(status: number, message: string, session?: FastifyRequest['consoleSession']): string {
  const title = status === 404 ? 'Not found' : status === 403 ? 'Refused' : status >= 500 ? 'Server error' : 'Cannot do that'
  const body = html`<p class="error" role="alert">${message}</p>
    <p><a href="/console">Back to the overview</a></p>`
  return page({ title, session, body }).text
}

export type ConsoleApp = FastifyInstance
