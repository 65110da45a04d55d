// Links to the product page (product-page-routes.ts), from the diagnostics and the product browser.

/** Path segments the router takes at most (maxParamLength in src/app.ts), with room to spare. */
const PATH_ID_MAX = 900
/**
 * The product page of `productId`: a clean path when the id fits in one (encoded, '/' too), else
 * `?id=`: a segment '.' or '..' is resolved away by browsers, and a long id passes the router's limit.
 */
export function productHref(siteId: string, productId: string): string {
  const encoded = encodeURIComponent(productId)
  if (productId === '.' || productId === '..' || encoded.length > PATH_ID_MAX) return `/console/sites/${siteId}/product?id=${encoded}`
  return `/console/sites/${siteId}/products/${encoded}`
}
