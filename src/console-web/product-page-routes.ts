import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { productAcrossStages } from '../channels/product-checks.js'
import type { ConsoleDeps } from './deps.js'
import { page } from './layout.js'
import { ProductIdQuery, ProductParams, SiteParams } from './page-params.js'
import { accountOfSession, queryText, sendPage } from './pages.js'
import { productHref } from './product-links.js'
import { productPage } from './product-page-views.js'

/** Channels the page shows the product in at most (those that have a row of it first), and checks per channel. */
const CHANNELS_SHOWN = 10
const CHECKS_SHOWN = 100

/**
 * One product of a site in each of its stages with every check of it per channel, at
 * /console/sites/{site}/products/{id} or, for an id no path segment carries, …/product?id={id}
 * (productHref picks). A product no stage has, and another account's site, are 404 pages.
 */
export const productPageRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, { db }) => {
  const show = async (request: FastifyRequest, reply: FastifyReply, siteId: string, productId: string) => {
    const accountId = accountOfSession(request)
    const product = await productAcrossStages(db, accountId, siteId, productId, { channels: CHANNELS_SHOWN, checks: CHECKS_SHOWN })
    const { site } = product
    const label = productId.length > 60 ? `${productId.slice(0, 60)}…` : productId
    const trail: [string, string][] = [
      ['Overview', '/console'],
      [site.title, `/console/sites/${site.id}`],
      ['Products', `/console/sites/${site.id}/products`],
      [label, productHref(site.id, productId)],
    ]
    return sendPage(reply, page({ title: `Product ${productId}`, session: request.consoleSession, trail, body: productPage(product) }))
  }

  app.get('/console/sites/:siteId/products/:productId', { schema: { hide: true, params: ProductParams } }, async (request, reply) => {
    const { siteId, productId } = request.params
    return show(request, reply, siteId, productId)
  })

  app.get('/console/sites/:siteId/product', { schema: { hide: true, params: SiteParams, querystring: ProductIdQuery } }, async (request, reply) => {
    return show(request, reply, request.params.siteId, queryText(request.query.id, 2000))
  })
}
