import { describe, expect, it } from 'vitest'
import { registeredRoutes } from '../helpers/registered-routes.js'
import { useTestApp } from '../helpers/test-app.js'

const t = useTestApp()

interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>
}
interface OpenApiDocument {
  openapi: string
  paths: Record<string, Record<string, Operation>>
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'])

function operations(document: OpenApiDocument): { method: string; path: string; operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.has(method))
      .map(([method, operation]) => ({ method: method.toUpperCase(), path, operation })),
  )
}

const toOpenApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}')

// Routes kept out of the OpenAPI document on purpose: the front door, the document and its UI, the product
// write endpoints withdrawn on 2025-03-31 that answer 410 to old clients (docs/compatibility.md), and the console's HTML
// pages, which are for people in a browser, not part of the API (test/console/ covers them).
const HIDDEN = [
  /^\/$/,
  /^\/metrics$/,
  /^\/docs/,
  /^\/openapi\.json$/,
  /^\/platform\/v2\/sites\/:siteId\/products\/:batchId\/(upload|commit|discard)$/,
  /^\/console(\/|$)/,
  // The console's icon, where browsers ask for it.
  /^\/favicon\.ico$/,
]

describe('route schemas', () => {
  // A route without a response schema still appears, as `200: {description: 'Default Response'}`
  // with no content; a 204 appears only when declared, and has no body to describe. JSON routes
  // describe application/json; the feed file route describes its feed media types.
  it('every documented operation declares a 2xx response with a schema (or a 204)', () => {
    const document = t.app.swagger() as unknown as OpenApiDocument
    const all = operations(document)
    expect(all.length).toBeGreaterThan(0)
    const missing = all
      .filter(
        ({ operation }) =>
          !Object.entries(operation.responses ?? {}).some(
            ([code, response]) => code === '204' || (/^2\d\d$/.test(code) && Object.values(response.content ?? {}).some((media) => media.schema !== undefined)),
          ),
      )
      .map(({ method, path }) => `${method} ${path}`)
    expect(missing).toEqual([])
  })

  it('every error status a platform route declares has the platform error body', () => {
    const document = t.app.swagger() as unknown as OpenApiDocument
    const platform = operations(document).filter(({ path }) => path.startsWith('/platform/') || path.startsWith('/product/'))
    expect(platform.length).toBeGreaterThan(0)
    for (const { method, path, operation } of platform) {
      const codes = Object.keys(operation.responses ?? {})
      expect(codes, `${method} ${path}`).toEqual(expect.arrayContaining(['401', '404']))
      for (const code of codes.filter((c) => /^[45]\d\d$/.test(c))) {
        const schema = operation.responses?.[code]?.content?.['application/json']?.schema as { properties?: Record<string, unknown> } | undefined
        expect(Object.keys(schema?.properties ?? {}).sort(), `${method} ${path} ${code}`).toEqual(['message', 'success'])
      }
    }
  })

  it('every registered route is in the OpenAPI document unless it is hidden on purpose', () => {
    const routes = registeredRoutes(t.app.printRoutes({ commonPrefix: false }))
    // The parser found the tree: routes that certainly exist are among what it read.
    expect(routes).toEqual(
      expect.arrayContaining([
        { method: 'GET', path: '/healthz' },
        { method: 'POST', path: '/platform/v2/projects' },
        { method: 'DELETE', path: '/platform/v2/sites/:siteId/tags/:tagId' },
      ]),
    )
    const document = t.app.swagger() as unknown as OpenApiDocument
    const documented = new Set(operations(document).map(({ method, path }) => `${method} ${path}`))
    const undocumented = routes
      // Fastify adds HEAD for every GET by itself.
      .filter(({ method }) => method !== 'HEAD')
      .filter(({ path }) => !HIDDEN.some((pattern) => pattern.test(path)))
      .filter(({ method, path }) => !documented.has(`${method} ${toOpenApiPath(path)}`))
      .map(({ method, path }) => `${method} ${path}`)
    expect(undocumented).toEqual([])
  })

  it('serves the OpenAPI document at /openapi.json', async () => {
    const response = await t.request({ method: 'GET', url: '/openapi.json' })
    expect(response.statusCode).toBe(200)
    const document = response.json<OpenApiDocument>()
    expect(document.openapi).toMatch(/^3\./)
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/platform/v2/projects', '/platform/v2/projects/{projectId}', '/platform/v2/sites', '/platform/v2/sites/{siteId}', '/healthz']),
    )
  })

  it('serves the browsable UI at /docs', async () => {
    const response = await t.request({ method: 'GET', url: '/docs' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/text\/html/)
    expect(response.body).toMatch(/swagger-ui/i)
  })

  it('sends a browser at / on to /docs', async () => {
    const response = await t.request({ method: 'GET', url: '/' })
    expect(response.statusCode).toBe(302)
    expect(response.headers.location).toBe('/docs')
  })
})
