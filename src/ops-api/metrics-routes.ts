import fp from 'fastify-plugin'
import { UnauthorizedError } from '../errors.js'
import { sendPlatformError } from '../http/error-funnels.js'
import { refuseNulParameters } from '../http/nul-guard.js'
import { UNMATCHED_ROUTE, scrapeAllowed, type AppMetrics } from './app-metrics.js'

export interface MetricsRouteOptions {
  metrics: AppMetrics
  /** METRICS_TOKEN: the bearer token a scrape must send; without one the metrics are open. */
  token: string | undefined
}

const METRICS_PATH = '/metrics'

/**
 * GET /metrics for Prometheus, and the timing of every request. Wrapped with fastify-plugin so that
 * the hook sits on the app itself and sees the routes of every interface; registered before them.
 * Outside the interfaces: no account, no per-account rate limit, not in the OpenAPI document.
 */
export const metricsRoutes = fp<MetricsRouteOptions>(
  async (app, { metrics, token }) => {
    app.addHook('onResponse', (request, reply, done) => {
      // The route's pattern, never the URL: ids in paths would make a series per product.
      const route = request.routeOptions.url ?? UNMATCHED_ROUTE
      // The scrapes themselves are left out: they would only count the scraper.
      if (route !== METRICS_PATH) metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000)
      done()
    })

    app.get(METRICS_PATH, { schema: { hide: true } }, async (request, reply) => {
      // Nothing here reads the query, but a NUL is refused at every door of the service alike.
      try {
        refuseNulParameters(request.query, 'query parameter')
      } catch (error) {
        return sendPlatformError(error, request, reply)
      }
      if (!scrapeAllowed(token, request.headers.authorization)) {
        reply.header('www-authenticate', 'Bearer realm="metrics"')
        return sendPlatformError(new UnauthorizedError('The metrics need Authorization: Bearer <METRICS_TOKEN>'), request, reply)
      }
      return reply.type(metrics.contentType).send(await metrics.render())
    })
  },
  { name: 'metrics', fastify: '5.x' },
)
