import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import type { FastifyPluginAsync } from 'fastify'
import { CONSOLE_CSS } from './console-css.js'
import { CONSOLE_JS } from './console-js.js'
import { FAVICON_PNG } from './favicon.js'

// Chart.js (chart.js on npm): a well-kept charting library that draws on a canvas and needs neither
// eval nor inline styles, so it runs under the console's Content-Security-Policy; served from
// node_modules, so that no request leaves the server.
const chartFile = path.join(path.dirname(createRequire(import.meta.url).resolve('chart.js')), 'chart.umd.min.js')

export const assetRoutes: FastifyPluginAsync = async (app) => {
  const chart = await readFile(chartFile)
  const serve = (url: string, type: string, body: string | Buffer) =>
    app.get(url, { config: { console: 'public' }, schema: { hide: true } }, async (_request, reply) =>
      reply.type(type).header('cache-control', 'public, max-age=3600').send(body),
    )
  serve('/console/assets/console.css', 'text/css; charset=utf-8', CONSOLE_CSS)
  serve('/console/assets/console.js', 'text/javascript; charset=utf-8', CONSOLE_JS)
  serve('/console/assets/chart.umd.min.js', 'text/javascript; charset=utf-8', chart)
  serve('/console/assets/favicon.png', 'image/png', FAVICON_PNG)
  serve('/favicon.ico', 'image/png', FAVICON_PNG)
}
