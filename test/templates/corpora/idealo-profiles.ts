import { catalog, DESCRIPTION_DE, GERMAN_COLORS, type Item } from './catalog-items.js'
import { as, comma, fixed, plain, product, rewritten, type CorpusProduct, type Part } from './corpus-kit.js'

// The clean part of the idealo corpus: offers as German shop systems, feed plugins, spreadsheets and
// JSON integrations write them. idealo reads amounts as bare numbers with a decimal point in EUR;
// the same amount with a decimal comma is rewritten (`_normalised`), with the currency written
// beside it the file carries the bare number (`_currency_removed`).

/** The values every offer has, exactly as idealo reads them. */
export function idealoExact(item: Item, sku: string): Part[] {
  return [
    ...plain({
      sku,
      title: item.titleDe,
      price: fixed(item.price),
      url: `https://shop.example.de/p/${item.slug}-${item.n}`,
      deliveryTime: '1-3 Werktage',
      brand: item.brand,
      eans: item.gtin,
      hans: item.mpn,
      categoryPath: item.kind.shopPath,
      description: DESCRIPTION_DE(item),
      imageUrls: `https://cdn.example.de/img/${item.slug}-${item.n}.jpg;https://cdn.example.de/img/${item.slug}-${item.n}-2.jpg`,
      deliveryCosts_dhl: '4.95',
      paymentCosts_paypal: '0.00',
    }),
    ...(item.kind.apparel ? plain({ size: item.size, colour: GERMAN_COLORS[item.color] ?? item.color }) : []),
  ]
}

interface Profile {
  source: string
  count: number
  id(item: Item): string
  parts(item: Item, i: number): Part[]
}

const bare = (attribute: string, amount: number) => as(attribute, fixed(amount))
/** An amount with a decimal comma: the file carries it with a point. */
const decimalComma = (attribute: string, amount: number) => rewritten(attribute, comma(amount), fixed(amount))
/** An amount with the currency beside it (as `written` formats it): the file carries the bare number. */
const withCurrency = (attribute: string, written: string, amount: number) => rewritten(attribute, written, fixed(amount), 'currency_removed')

const PROFILES: Profile[] = [
  {
    source: 'Shopware 6 product comparison (idealo template): bare amounts with a point, product numbers as sku',
    count: 30,
    id: (item) => `SW${10000 + item.n}`,
    parts: () => [bare('deliveryCosts_dpd', 5.9), as('paymentCosts_invoice', '0'), bare('paymentCosts_cash_on_delivery', 6.5)],
  },
  {
    // JTL-Wawi / JTL-Shop export formats write German decimal commas.
    source: 'JTL-Shop export format "idealo" (German): "19,99", deliveryCosts "4,95", formerPrice "24,99"',
    count: 30,
    id: (item) => `JTL-${20000 + item.n}`,
    parts: (item, i) => [
      decimalComma('price', item.price),
      decimalComma('deliveryCosts_dhl', 4.95),
      decimalComma('paymentCosts_paypal', 0),
      ...(i % 3 === 0 ? [decimalComma('formerPrice', item.price + 5)] : []),
    ],
  },
  {
    source: 'plentymarkets ElasticExport IdealoDE: bare amounts, variation ids, basePrice, packagingUnit',
    count: 25,
    id: (item) => String(1000 + item.n),
    parts: (item, i) => [
      bare('formerPrice', item.price + 10),
      as('packagingUnit', '1'),
      bare('deliveryCosts_ups', 6.9),
      as('paymentCosts_credit_card', '0.00'),
      ...(item.kind.en.startsWith('Espresso') ? [as('basePrice', `1 kg = ${fixed(item.price)} EUR`)] : []),
      ...(i % 5 === 0 ? [as('voucherCode', 'IDEALO10')] : []),
    ],
  },
  {
    // Product Feed PRO's idealo template with the shop currency appended to prices.
    source: 'WooCommerce + Product Feed PRO (idealo template): "19.99 EUR", delivery "4.95 EUR"',
    count: 25,
    id: (item) => `wc-${3400 + item.n}`,
    parts: (item) => [withCurrency('price', `${fixed(item.price)} EUR`, item.price), withCurrency('deliveryCosts_dhl', '4.95 EUR', 4.95)],
  },
  {
    // A German Shopify store's money format ("{{amount_with_comma_separator}} €") or the code first.
    source: 'Shopify (German store) feed app: "24,95 €", "EUR 24.95"',
    count: 20,
    id: (item) => `shopify_DE_${7012345600000 + item.n}`,
    parts: (item, i) => [withCurrency('price', i % 2 === 0 ? `${comma(item.price)} €` : `EUR ${fixed(item.price)}`, item.price)],
  },
  {
    // A merchant's spreadsheet: Excel's TRUE/FALSE, Yes/No, lower-case energy classes, blanks kept.
    source: 'spreadsheet edited by hand: used "FALSE", replica "No", eec "a++", price " 19.99 ", "Parcel Service"',
    count: 20,
    id: (item) => `SHEET-${item.n}`,
    parts: (item, i) => [
      rewritten('price', ` ${fixed(item.price)} `, fixed(item.price)),
      rewritten('used', 'FALSE', 'false'),
      rewritten('replica', 'No', 'false'),
      ...(i % 2 === 0 ? [rewritten('eec', 'a++', 'A++')] : [as('eec', 'B')]),
      rewritten('fulfillmentType', 'Parcel Service', 'PARCEL_SERVICE'),
    ],
  },
  {
    // JSON numbers are stored as their text, `false` as empty, `true` as 1 (read as true).
    source: 'ERP JSON integration: amounts as JSON numbers, used false (stored ""), e-books with download true (stored "1")',
    count: 20,
    id: (item) => `erp-${item.n}`,
    parts: (item, i) => [
      as('price', item.price),
      as('deliveryCosts_dhl', 4.95),
      as('paymentCosts_paypal', 0),
      as('used', false),
      ...(i % 4 === 0 ? [rewritten('download', true, 'true'), as('fulfillmentType', 'DOWNLOAD'), as('deliveryCosts_dhl', 0)] : []),
    ],
  },
  {
    // German drinks shop: the bottle deposit ("Pfand") beside the price.
    source: 'German drinks shop: deposit "0,25 €" and "0.08", the parcel service',
    count: 15,
    id: (item) => `GET-${item.n}`,
    parts: (item, i) => [
      i % 2 === 0 ? withCurrency('deposit', '0,25 €', 0.25) : as('deposit', '0.08'),
      as('fulfillmentType', 'PARCEL_SERVICE'),
      as('quantityPerOrder', '24'),
      as('basePrice', `1 l = ${fixed(item.price / 2)} EUR`),
    ],
  },
  {
    // Large appliances sold with idealo checkout: freight forwarder, two-man handling, disposal.
    source: 'appliance shop with idealo checkout: FREIGHT_FORWARDER, twoManHandlingFee, disposalFee -1 (not offered)',
    count: 15,
    id: (item) => `APP-${item.n}`,
    parts: (item, i) => [
      as('fulfillmentType', 'FREIGHT_FORWARDER'),
      as('twoManHandlingFee', '29.90'),
      as('disposalFee', i % 3 === 0 ? '-1' : '19.90'),
      as('eec', ['A', 'B', 'C'][i % 3] ?? 'A'),
      as('deliveryCosts_dhl', ''),
      bare('deliveryCosts_deutsche_post', 0),
    ],
  },
]

export function idealoCleanProducts(): CorpusProduct[] {
  let first = 0
  return PROFILES.flatMap((profile, p) => {
    const items = catalog(300 + p, profile.count, first)
    first += profile.count
    return items.map((item, i) => {
      const id = profile.id(item)
      return product(id, profile.source, [...idealoExact(item, id), ...profile.parts(item, i)])
    })
  })
}
