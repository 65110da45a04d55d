import { randomBytes } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { closeConsoleSession, openConsoleSession, operatorMark, type ConsoleOwner } from '../accounts/console-sessions.js'
import { authAttempt } from '../auth/authenticate.js'
import { sameSecret } from '../auth/secrets.js'
import { AppError } from '../errors.js'
import type { ConsoleDeps } from './deps.js'
import { html } from './html.js'
import { page } from './layout.js'
import { SignInQuery } from './page-params.js'
import { SESSION_COOKIE, SIGN_IN_COOKIE } from './session-cookie.js'
import { signedValue, unsignedValue } from './session-cookie-signature.js'
import './console-types.js'

interface SignInBody {
  credential?: unknown
  next?: unknown
  _sign_in?: unknown
}

/** A form or query value as one text: the first of repeated ones, '' for anything else. */
function firstText(value: unknown): string {
  const first = Array.isArray(value) ? (value as unknown[])[0] : value
  return typeof first === 'string' ? first : ''
}

export const sessionRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, deps) => {
  const hours = deps.config.CONSOLE_SESSION_HOURS
  const secure = (request: FastifyRequest) => request.protocol === 'https'

  app.get('/console/sign-in', { config: { console: 'public' }, schema: { hide: true, querystring: SignInQuery } }, async (request, reply) => {
    const next = safeNext(firstText(request.query.next))
    return showSignIn(request, reply, next, undefined)
  })

  app.post('/console/sign-in', { config: { console: 'public' }, schema: { hide: true } }, async (request, reply) => {
    const body = (request.body ?? {}) as SignInBody
    const expected = request.cookies[SIGN_IN_COOKIE]
    if (!expected || typeof body._sign_in !== 'string' || !sameSecret(body._sign_in, expected)) {
      throw new AppError(403, 'The sign-in form has expired or did not come from this console; reload it and try again', 'forbidden')
    }
    const credential = firstText(body.credential).trim()
    const owner = await signInOwner(deps, request, credential)
    if (!owner)
      return showSignIn(
        request,
        reply,
        safeNext(firstText(body.next)),
        'That credential is not valid: paste the X-Auth-Token value (client_id:secret) or a personal access token.',
      )
    const opened = await openConsoleSession(deps.db, owner, deps.clock(), hours * 3600_000)
    reply.clearCookie(SIGN_IN_COOKIE, { path: '/console' })
    reply.setCookie(SESSION_COOKIE, signedValue(opened.id, request.consoleCookieKey ?? ''), {
      path: '/console',
      httpOnly: true,
      sameSite: 'strict',
      secure: secure(request),
      maxAge: hours * 3600,
    })
    return reply.redirect(owner.operator ? '/console/operator' : safeNext(firstText(body.next)), 303)
  })

  app.post('/console/sign-out', { schema: { hide: true } }, async (request, reply) => {
    const signed = request.cookies[SESSION_COOKIE]
    const id = signed ? unsignedValue(signed, request.consoleCookieKey ?? '') : undefined
    if (id) await closeConsoleSession(deps.db, id)
    reply.clearCookie(SESSION_COOKIE, { path: '/console' })
    return reply.redirect('/console/sign-in', 303)
  })
}

/**
 * The account a pasted credential names (the X-Auth-Token value, or a personal access token), or the
 * operator for CONSOLE_OPERATOR_TOKEN. Failed sign-ins count with the interfaces' failed authentications.
 */
async function signInOwner(deps: ConsoleDeps, request: FastifyRequest, credential: string): Promise<ConsoleOwner | null> {
  // No credential holds a control character; one that does is refused before it reaches a query.
  if (credential === '' || hasControlCharacter(credential)) return null
  const headers = credential.includes(':') ? { xAuthToken: credential } : { authorization: `Bearer ${credential}` }
  // Checked (and counted) as the interfaces check credentials first, so that guesses of the operator
  // token are throttled with every other failed authentication of the address.
  const caller = await deps.authLimit.authenticate(request.ip, authAttempt(deps.db, 'x-auth-token-or-bearer', headers))
  if (caller) return { accountId: caller.accountId, operator: false, credentialId: caller.credentialId }
  const operatorToken = deps.config.CONSOLE_OPERATOR_TOKEN
  if (operatorToken !== undefined && sameSecret(credential, operatorToken))
    return { accountId: null, operator: true, credentialId: operatorMark(operatorToken) }
  return null
}

function showSignIn(request: FastifyRequest, reply: FastifyReply, next: string, failure: string | undefined) {
  const token = randomBytes(18).toString('base64url')
  reply.setCookie(SIGN_IN_COOKIE, token, { path: '/console', httpOnly: true, sameSite: 'strict', secure: request.protocol === 'https' })
  const body = html`<form class="sign-in" method="post" action="/console/sign-in">
    ${failure ? html`<p class="error" role="alert">${failure}</p>` : ''}
    ${
      next.startsWith('/console/operator')
        ? html`<p>The operator view: sign in with the operator token, the value of <code>CONSOLE_OPERATOR_TOKEN</code> in the server's configuration.</p>
            <label for="credential">Operator token</label>`
        : html`<p>
              Sign in with your account's platform credential (the value of <code>X-Auth-Token</code>, <code>client_id:secret</code>) or a personal access
              token, as <code>npx catalog-platform accounts create</code> printed them.
            </p>
            <label for="credential">Credential</label>`
    }
    <input id="credential" name="credential" type="password" autocomplete="current-password" required autofocus />
    <input type="hidden" name="_sign_in" value="${token}" />
    <input type="hidden" name="next" value="${next}" />
    <button type="submit">Sign in</button>
  </form>`
  return reply
    .code(failure ? 401 : 200)
    .type('text/html; charset=utf-8')
    .send(page({ title: 'Sign in', session: undefined, body }).text)
}

/** Where to go after signing in: a console path only, never another site. */
function safeNext(next: string): string {
  return /^\/console(\/[^/\\]|$|\?)/.test(next) && !hasControlCharacter(next) ? next : '/console'
}

function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20 || code === 0x7f) return true
  }
  return false
}
