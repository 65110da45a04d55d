import { catalog, DESCRIPTION_DE, DESCRIPTION_EN, type Item } from './catalog-items.js'
import { as, comma, fixed, plain, product, rewritten, type CorpusProduct, type Part } from './corpus-kit.js'

// The clean part of the Meta catalog corpus: products as Meta's own shop integrations, feeds
// written for Google, German shop systems, spreadsheets and JSON integrations write them. Meta's
// spelling is "in stock" with a space; other spellings are rewritten, each with its info code.

/** The values every Meta item has, exactly as Meta writes them. */
export function metaExact(item: Item): Part[] {
  return [
    ...plain({
      title: item.title,
      description: DESCRIPTION_EN(item),
      availability: 'in stock',
      condition: 'new',
      price: `${fixed(item.price)} EUR`,
      link: `https://shop.example.com/p/${item.slug}-${item.n}`,
      image_link: `https://cdn.example.com/img/${item.slug}-${item.n}.jpg`,
      brand: item.brand,
      gtin: item.gtin,
      item_group_id: item.group,
      google_product_category: item.kind.googleId,
    }),
    ...(item.kind.apparel ? plain({ color: item.color, size: item.size, gender: 'unisex', age_group: 'adult' }) : []),
  ]
}

interface Profile {
  source: string
  count: number
  id(item: Item): string
  parts(item: Item, i: number): Part[]
}

/** An availability in a spelling of Meta's value `canonical`: as sent when it is Meta's own. */
const availability = (written: string, canonical: string) =>
  written === canonical ? as('availability', written) : rewritten('availability', written, canonical)

const PROFILES: Profile[] = [
  {
    // Shopify's Facebook & Instagram channel: Shopify's content ids, Meta's own values.
    source: 'Shopify Facebook & Instagram channel: "in stock", "24.95 EUR", status active',
    count: 30,
    id: (item) => `shopify_DE_${7012345600000 + item.n}_${40123456780000 + item.n}`,
    parts: (item, i) => [
      ...metaExact(item),
      as('google_product_category', item.kind.googlePath),
      as('status', 'active'),
      ...(i % 6 === 5 ? [as('availability', 'out of stock')] : []),
      ...(i % 4 === 0 ? [as('price', `${fixed(item.price + 10)} EUR`), as('sale_price', `${fixed(item.price)} EUR`)] : []),
    ],
  },
  {
    // Facebook for WooCommerce: retailer ids "<sku>_<post id>", the stock quantity for checkout,
    // the product's HTML description with its line breaks.
    source: 'Facebook for WooCommerce: ids "<sku>_<post id>", quantity_to_sell_on_facebook, multi-line description',
    count: 25,
    id: (item) => `${item.mpn}_${2000 + item.n}`,
    parts: (item, i) => [
      ...metaExact(item),
      as('description', `<p>${DESCRIPTION_EN(item)}</p>\n<ul>\n<li>Material: cotton, "soft" finish</li>\n<li>Care: 30 °C</li>\n</ul>`),
      as('quantity_to_sell_on_facebook', String(i % 7 === 6 ? 0 : 3 + i)),
      ...(i % 7 === 6 ? [as('availability', 'out of stock')] : []),
    ],
  },
  {
    // A feed written for Google Merchant Center sent to Meta too: Google's in_stock, out_of_stock,
    // backorder (Meta's "available for order") and preorder.
    source: 'feed written for Google re-used for Meta: "in_stock", "out_of_stock", "backorder", "preorder"',
    count: 25,
    id: (item) => `G-${item.n}`,
    parts: (item, i) => {
      const [written, canonical] = [
        ['in_stock', 'in stock'],
        ['in_stock', 'in stock'],
        ['out_of_stock', 'out of stock'],
        ['backorder', 'available for order'],
        ['preorder', 'preorder'],
      ][i % 5] ?? ['', '']
      return [...metaExact(item), availability(written ?? '', canonical ?? '')]
    },
  },
  {
    // Magento 2 / Adobe Commerce with Meta's Business Extension: Meta's values, the SKU as id.
    source: 'Magento 2 / Adobe Commerce Meta Business Extension: SKU ids, "in stock", "19.99 EUR"',
    count: 20,
    id: (item) => `MB${String(item.n).padStart(5, '0')}`,
    parts: (item, i) => [...metaExact(item), as('mpn', item.mpn), ...(i % 5 === 4 ? [as('availability', 'out of stock')] : [])],
  },
  {
    // German shops (Shopware 6, JTL-Shop, plentymarkets): German titles, prices with a decimal
    // comma, the currency sign or code after them.
    source: 'German shop systems (Shopware 6, JTL, plentymarkets): "29,99 €", "19,99 EUR", German titles',
    count: 30,
    id: (item) => `SW${10000 + item.n}`,
    parts: (item, i) => [
      ...metaExact(item),
      ...plain({ title: item.titleDe, description: DESCRIPTION_DE(item), product_type: item.kind.shopPath }),
      rewritten('price', i % 2 === 0 ? `${comma(item.price)} €` : `${comma(item.price)} EUR`, `${fixed(item.price)} EUR`),
    ],
  },
]

// A merchant's spreadsheet: title case, blanks a cell keeps (a tab, a no-break space), `_` for a space.
const SHEET_STOCK = ['In Stock', ' in stock\t', 'In_Stock', '\u00a0in stock', 'IN STOCK ']
PROFILES.push({
  source: 'spreadsheet edited by hand: "In Stock", blanks around, "New", "Female", "All_Ages"',
  count: 20,
  id: (item) => `SHEET-${item.n}`,
  parts: (item, i) => [
    ...metaExact(item),
    rewritten('availability', SHEET_STOCK[i % SHEET_STOCK.length] ?? '', 'in stock'),
    rewritten('condition', 'New', 'new'),
    ...(item.kind.apparel
      ? [rewritten('gender', 'Female', 'female'), rewritten('age_group', i % 2 === 0 ? 'All_Ages' : 'Adult', i % 2 === 0 ? 'all ages' : 'adult')]
      : []),
  ],
})

// An ERP's JSON integration: a price as a JSON number (the channel's currency is added), the stock
// as a JSON number.
PROFILES.push({
  source: 'ERP JSON integration: price and quantity as JSON numbers',
  count: 20,
  id: (item) => `erp-${item.n}`,
  parts: (item, i) => [
    ...metaExact(item),
    rewritten('price', item.price, `${fixed(item.price)} EUR`, 'currency_added'),
    as('quantity_to_sell_on_facebook', 10 + i),
    as('status', 'active'),
  ],
})

// A second-hand and refurbished electronics shop: Meta's finer conditions, in its enum's spelling
// and as people write them.
const CONDITIONS: [string, string][] = [
  ['used_like_new', 'used_like_new'],
  ['Used like new', 'used_like_new'],
  ['open_box_new', 'open_box_new'],
  ['cpo', 'cpo'],
  ['refurbished', 'refurbished'],
  ['used_good', 'used_good'],
  ['Used Good', 'used_good'],
  ['used_fair', 'used_fair'],
]
PROFILES.push({
  source: "second-hand shop: Meta's condition enum (used_like_new, open_box_new, cpo) and 'Used like new'",
  count: 16,
  id: (item) => `RE-${item.n}`,
  parts: (item, i) => {
    const [written, canonical] = CONDITIONS[i % CONDITIONS.length] ?? ['', '']
    return [...metaExact(item), written === canonical ? as('condition', written) : rewritten('condition', written, canonical)]
  },
})

// Meta's own product categories, by path, as Commerce Manager shows them and with the spacing lost.
PROFILES.push({
  source: "Meta's product categories by path (Commerce Manager), some without spaces around '>'",
  count: 15,
  id: (item) => `FBC-${item.n}`,
  parts: (item, i) => [
    ...metaExact(item),
    i % 3 === 0 ? rewritten('fb_product_category', item.kind.fbPath.replaceAll(' > ', '>'), item.kind.fbPath) : as('fb_product_category', item.kind.fbPath),
  ],
})

export function metaCleanProducts(): CorpusProduct[] {
  let first = 0
  return PROFILES.flatMap((profile, p) => {
    const items = catalog(200 + p, profile.count, first)
    first += profile.count
    return items.map((item, i) => product(profile.id(item), profile.source, profile.parts(item, i)))
  })
}
