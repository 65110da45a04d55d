import type { FastifyInstance } from 'fastify'

// Signing in to the console as a browser does, over app.inject: the sign-in form's cookie and
// hidden token, then the session cookie for every later request.

export interface ConsoleUser {
  cookie: string
  get(url: string): Promise<{ status: number; body: string; location: string | undefined }>
  /** A form post; URLSearchParams sends a field more than once. */
  post(url: string, form: Record<string, string> | URLSearchParams): Promise<{ status: number; body: string; location: string | undefined }>
  /** The CSRF token of the session, as the forms of `url` carry it. */
  csrf(url?: string): Promise<string>
}

function cookiesOf(headers: Record<string, unknown>): string[] {
  const set = headers['set-cookie']
  const list = Array.isArray(set) ? set : typeof set === 'string' ? [set] : []
  return list.map((cookie: string) => cookie.split(';')[0]!)
}

export async function signInForm(app: FastifyInstance): Promise<{ cookie: string; token: string }> {
  const form = await app.inject({ method: 'GET', url: '/console/sign-in' })
  const token = /name="_sign_in" value="([^"]+)"/.exec(form.body)?.[1] ?? ''
  return { cookie: cookiesOf(form.headers).join('; '), token }
}

export async function signIn(app: FastifyInstance, credential: string, remoteAddress = '127.0.0.1') {
  const form = await signInForm(app)
  return app.inject({
    method: 'POST',
    url: '/console/sign-in',
    headers: { cookie: form.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ credential, _sign_in: form.token, next: '/console' }).toString(),
    remoteAddress,
  })
}

export async function consoleUser(app: FastifyInstance, credential: string): Promise<ConsoleUser> {
  const response = await signIn(app, credential)
  if (response.statusCode !== 303) throw new Error(`sign-in failed: ${response.statusCode} ${response.body.slice(0, 300)}`)
  const cookie = cookiesOf(response.headers).find((c) => c.startsWith('cp_console=')) ?? ''
  const answer = (r: { statusCode: number; body: string; headers: Record<string, unknown> }) => ({
    status: r.statusCode,
    body: r.body,
    location: typeof r.headers.location === 'string' ? r.headers.location : undefined,
  })
  const user: ConsoleUser = {
    cookie,
    get: async (url) => answer(await app.inject({ method: 'GET', url, headers: { cookie } })),
    post: async (url, form) =>
      answer(
        await app.inject({
          method: 'POST',
          url,
          headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams(form).toString(),
        }),
      ),
    csrf: async (url = '/console') => /name="_csrf" value="([^"]+)"/.exec((await user.get(url)).body)?.[1] ?? '',
  }
  return user
}
