import { flawedProducts, kept, out, type Flaw } from './flaws.js'
import { as, failing, group, rewritten, type CorpusProduct } from './corpus-kit.js'
import { idealoCleanProducts, idealoExact } from './idealo-profiles.js'

// The idealo corpus: the clean offers of idealo-profiles.ts and what real exports get wrong. idealo
// needs sku, title, price (a bare amount in EUR), url and deliveryTime: an error leaves the offer out.
// Everything else, identifiers and costs included, is a warning.

const amount = (attribute: string, value: string) => () => [failing(attribute, value, `${attribute}_invalid_number`)]
const missing = (attribute: string) => () => [failing(attribute, '', `${attribute}_missing`)]
const DELIVERY = ['deliveryCosts_dhl', 'deliveryCosts_dpd', 'deliveryCosts_ups', 'deliveryCosts_deutsche_post']
const PAYMENT = ['paymentCosts_paypal', 'paymentCosts_invoice', 'paymentCosts_credit_card', 'paymentCosts_cash_on_delivery']

const FLAWS: Flaw[] = [
  out('i-bad-price-usd', 'international shop exporting its USD price list: "29.99 USD"', amount('price', '29.99 USD')),
  out('i-bad-price-de-thousands', 'German number format with a thousands point: "1.299,00"', amount('price', '1.299,00')),
  out('i-bad-price-thousands', 'US number format with a thousands separator: "1,299.00"', amount('price', '1,299.00')),
  out('i-bad-price-from', 'variant price range written "ab 19,99"', amount('price', 'ab 19,99')),
  out('i-bad-price-negative', 'ERP deposit-return line exported as an offer: "-1.50"', amount('price', '-1.50')),
  out('i-bad-price-money-with-currency', 'Shopify {{ price | money_with_currency }}: "€19,99 EUR", the currency twice', amount('price', '€19,99 EUR')),
  out('i-bad-price-missing', 'offer without a price (price on request)', missing('price')),
  out('i-bad-delivery-time-missing', 'delivery time not maintained in the ERP', missing('deliveryTime')),
  out('i-bad-url-missing', 'offer hidden in the shop: no URL', missing('url')),
  out('i-bad-url-www', 'URL without its scheme: "www.shop.example.de/…"', (item) => [failing('url', `www.shop.example.de/p/${item.slug}`, 'url_invalid_url')]),
  out('i-bad-sku-missing', 'variant without an article number', missing('sku')),
  out('i-bad-title-missing', 'variant exported without its parent title', missing('title')),
  out('i-bad-title-long', 'marketplace title over 255 characters', (item) => [
    failing('title', `${item.titleDe} | ${'Premium Qualität Geschenkidee für Damen Herren Kinder Geburtstag Weihnachten '.repeat(3)}`, 'title_too_long'),
  ]),
  kept('i-warn-eans-comma', 'several EANs separated by commas instead of ";"', (item) => [failing('eans', `${item.gtin},${item.upc}`, 'eans_invalid_format')]),
  kept('i-warn-eans-excel', 'Excel wrote the EAN in scientific notation: "4.00638E+12"', () => [failing('eans', '4.00638E+12', 'eans_invalid_format')]),
  kept('i-warn-no-identifiers', 'own-brand goods without EAN or manufacturer number', () => [as('eans', ''), as('hans', ''), group('identifier_missing')]),
  kept('i-warn-no-delivery-costs', 'delivery costs kept in the shop settings, not exported', () => [
    as('deliveryCosts_dhl', ''),
    group('delivery_costs_missing'),
  ]),
  kept('i-warn-delivery-free-word', 'delivery costs written as a word: "kostenlos"', amount('deliveryCosts_dhl', 'kostenlos')),
  kept('i-warn-delivery-usd', 'delivery costs in another currency: "4.95 USD"', amount('deliveryCosts_dhl', '4.95 USD')),
  kept('i-warn-no-payment-costs', 'payment costs not exported', () => [as('paymentCosts_paypal', ''), group('payment_costs_missing')]),
  kept('i-warn-brand-missing', 'no manufacturer maintained', missing('brand')),
  kept('i-warn-category-missing', 'article without a category', missing('categoryPath')),
  kept('i-warn-description-missing', 'article without a description', missing('description')),
  kept('i-warn-images-missing', 'article without images', missing('imageUrls')),
  kept('i-warn-images-spaces', 'images separated by spaces instead of ";"', (item) => [
    failing('imageUrls', `https://cdn.example.de/${item.n}.jpg https://cdn.example.de/${item.n}-2.jpg`, 'imageUrls_invalid_format'),
  ]),
  kept('i-warn-used-ja', 'German flag "ja" for used', () => [failing('used', 'ja', 'used_invalid_value')]),
  kept('i-warn-replica-nein', 'German flag "Nein" for replica', () => [failing('replica', 'Nein', 'replica_invalid_value')]),
  kept('i-warn-eec-range', 'energy class with its scale: "A+++ bis D"', () => [failing('eec', 'A+++ bis D', 'eec_invalid_value')]),
  kept('i-warn-former-usd', 'former price from a USD list: "24.99 USD"', amount('formerPrice', '24.99 USD')),
  kept('i-warn-packaging-zero', 'packaging unit 0 from an empty ERP field', () => [failing('packagingUnit', '0', 'packagingUnit_invalid_integer')]),
  kept('i-warn-fulfillment-paket', 'fulfillment type in German: "Paket"', () => [failing('fulfillmentType', 'Paket', 'fulfillmentType_invalid_value')]),
  kept('i-warn-disposal-below', 'disposal fee "-2" (only -1 means not offered)', amount('disposalFee', '-2')),
  kept('i-info-price-one-decimal', 'JTL price with one decimal: "19,9"', () => [rewritten('price', '19,9', '19.9')]),
  kept('i-info-price-euro-sign-point', 'feed app writing "19.99 €"', () => [rewritten('price', '19.99 €', '19.99', 'currency_removed')]),
  kept('i-info-delivery-lower-code', 'delivery costs with the code in lower case: "4.95 eur"', () => [
    rewritten('deliveryCosts_dhl', '4.95 eur', '4.95', 'currency_removed'),
  ]),
  kept('i-info-used-yes', 'second-hand offer flagged "yes"', () => [rewritten('used', 'yes', 'true')]),
  kept('i-info-replica-zero', 'Magento boolean "0" for replica', () => [rewritten('replica', '0', 'false')]),
  kept('i-info-download-json-true', 'JSON integration: download true (stored "1") for an e-book', () => [rewritten('download', true, 'true')]),
  out('i-bad-title-and-url', 'half-filled row: no title and URL "www…" (the skipped file names title, first)', (item) => [
    failing('title', '', 'title_missing'),
    failing('url', `www.shop.example.de/p/${item.slug}`, 'url_invalid_url'),
  ]),
  {
    ...kept('i-info-price-nbsp', 'Shopware 6 Twig |currency filter, de-DE: "19,99\u00a0€" (a no-break space before €)', () => [
      rewritten('price', '19,99\u00a0€', '19.99', 'currency_removed'),
    ]),
  },
  {
    ...kept('i-info-price-nbsp-around', 'price pasted from a web page with a no-break space after it: "19.99\u00a0"', () => [
      rewritten('price', '19.99\u00a0', '19.99'),
    ]),
  },
  {
    ...out('i-bad-delivery-time-newline', 'ERP field holding only a line break', () => [failing('deliveryTime', '\n', 'deliveryTime_missing')]),
  },
  kept('i-info-all-costs', 'every carrier and payment method as a decimal comma', () => [
    ...DELIVERY.map((name) => rewritten(name, '4,90', '4.90')),
    ...PAYMENT.map((name) => rewritten(name, '1,50', '1.50')),
  ]),
]

export function idealoCorpus(): CorpusProduct[] {
  // The sku is the product id (as every shop here sends it), but for the product without one.
  return [...idealoCleanProducts(), ...flawedProducts(FLAWS, 399, (item, flaw) => idealoExact(item, flaw.id))]
}
