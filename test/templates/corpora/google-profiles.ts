import { catalog, DESCRIPTION_DE, DESCRIPTION_EN, type Item } from './catalog-items.js'
import { as, comma, fixed, less, plain, product, rewritten, type CorpusProduct, type Part } from './corpus-kit.js'

// The clean part of the Google Shopping corpus: products as shop systems, feed plugins,
// integrations and people write them, every one of which Google's specification accepts. Values
// written another way than Google's own are rewritten, each with its info code.

const SHOP = 'https://shop.example.com'

/** The values every Google product has, exactly as Google writes them (English shop, EUR). */
export function googleExact(item: Item): Part[] {
  return [
    ...plain({
      title: item.title,
      description: DESCRIPTION_EN(item),
      link: `${SHOP}/p/${item.slug}-${item.n}`,
      image_link: `https://cdn.example.com/img/${item.slug}-${item.n}.jpg`,
      availability: 'in_stock',
      price: `${fixed(item.price)} EUR`,
      brand: item.brand,
      gtin: item.gtin,
      condition: 'new',
      google_product_category: item.kind.googleId,
      item_group_id: item.group,
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

/** Every sixth product out of stock; a spelling other than Google's (in_stock, out_of_stock) is rewritten to it. */
const stock = (i: number, inStock: string, outOfStock: string) => {
  const written = i % 6 === 5 ? outOfStock : inStock
  const google = written.toLowerCase().replaceAll(' ', '_')
  return written === google ? as('availability', written) : rewritten('availability', written, google)
}

const PROFILES: Profile[] = [
  {
    // Shopify through a Google feed app: offer ids as Shopify's Google channel makes them
    // (shopify_<country>_<product>_<variant>), availability in Google's older spelling with a space,
    // the vendor as brand, the variant's barcode as gtin, the product type, the variant's compare-at
    // price turned into price and sale_price.
    source: 'Shopify store via a Google feed app: "in stock", "24.95 EUR", category path',
    count: 30,
    id: (item) => `shopify_DE_${7012345600000 + item.n}_${40123456780000 + item.n}`,
    parts: (item, i) => [
      ...googleExact(item),
      as('link', `${SHOP}/products/${item.slug}?variant=${40123456780000 + item.n}`),
      as('image_link', `https://cdn.shopify.com/s/files/1/0612/3456/products/${item.slug}-${item.n}.jpg`),
      as('google_product_category', item.kind.googlePath),
      as('product_type', item.kind.en),
      as('item_group_id', `shopify_DE_${7012345600000 + item.n}`),
      stock(i, 'in stock', 'out of stock'),
      ...(i % 4 === 0 ? [as('price', `${fixed(item.price + 10)} EUR`), as('sale_price', `${fixed(item.price)} EUR`)] : []),
    ],
  },
  {
    // WooCommerce with a feed plugin (Product Feed PRO, CTX Feed) mapping stock status and prices
    // to Google's values: the product's numeric WordPress id, a shipping rule in Google's colon form.
    source: 'WooCommerce + Product Feed PRO / CTX Feed: "in_stock", "19.99 EUR", shipping "DE::Standard:4.95 EUR"',
    count: 25,
    id: (item) => String(1200 + item.n),
    parts: (item, i) => [...googleExact(item), stock(i, 'in_stock', 'out_of_stock'), as('mpn', item.mpn), as('shipping', 'DE::Standard:4.95 EUR')],
  },
  {
    // WooCommerce exported with WP All Export: the stock status label the shop shows ("In stock",
    // "Out of stock"), the bare `_regular_price` meta and a static condition "New".
    source: 'WooCommerce via WP All Export: stock status labels "In stock", bare _regular_price "24.5", condition "New"',
    count: 15,
    id: (item) => `wc-${3400 + item.n}`,
    parts: (item, i) => [
      ...googleExact(item),
      stock(i, 'In stock', 'Out of stock'),
      rewritten('price', String(item.price), `${fixed(item.price)} EUR`, 'currency_added'),
      ...(i % 3 === 0 ? [rewritten('sale_price', String(less(item.price, 1)), `${fixed(less(item.price, 1))} EUR`, 'currency_added')] : []),
      rewritten('condition', 'New', 'new'),
    ],
  },
  {
    // Magento 2 / Adobe Commerce: boolean attributes exported as their labels Yes and No.
    source: 'Magento 2 / Adobe Commerce catalog export: booleans as "Yes"/"No" or "0", SKU as id',
    count: 20,
    id: (item) => `MB${String(item.n).padStart(5, '0')}-${item.color.slice(0, 3).toUpperCase()}`,
    parts: (item, i) => [
      ...googleExact(item),
      stock(i, 'in stock', 'out of stock'),
      rewritten('identifier_exists', 'Yes', 'yes'),
      rewritten('adult', i % 2 === 0 ? 'No' : '0', 'no'),
      ...(i % 3 === 0 ? [rewritten('is_bundle', 'No', 'no')] : []),
    ],
  },
  {
    // Shopware 6 product comparison export with the German price format: a decimal comma and the code.
    source: 'Shopware 6 product comparison (German): "19,99 EUR", shipping "DE::Standard:4.95 EUR", German titles',
    count: 20,
    id: (item) => `SW${10000 + item.n}`,
    parts: (item) => [
      ...googleExact(item),
      ...plain({ title: item.titleDe, description: DESCRIPTION_DE(item), product_type: item.kind.shopPath, shipping: 'DE::Standard:4.95 EUR' }),
      rewritten('price', `${comma(item.price)} EUR`, `${fixed(item.price)} EUR`),
    ],
  },
  {
    // JTL-Shop / JTL-Wawi export format with the German currency format: "29,99 €".
    source: 'JTL-Shop export format (German): "29,99 €", "in stock", shipping "DE:::4.95 EUR"',
    count: 15,
    id: (item) => `JTL-${20000 + item.n}`,
    parts: (item, i) => [
      ...googleExact(item),
      ...plain({ title: item.titleDe, description: DESCRIPTION_DE(item), shipping: 'DE:::4.95 EUR' }),
      rewritten('price', `${comma(item.price)} €`, `${fixed(item.price)} EUR`),
      stock(i, 'in stock', 'out of stock'),
    ],
  },
  {
    // plentymarkets: the variation's price as a bare number, the currency configured elsewhere.
    source: 'plentymarkets ElasticExport: bare price "19.99", variation id as id',
    count: 10,
    id: (item) => String(1000 + item.n),
    parts: (item) => [...googleExact(item), rewritten('price', fixed(item.price), `${fixed(item.price)} EUR`, 'currency_added')],
  },
  {
    // PrestaShop: id_product-id_product_attribute, its own condition field (new, used, refurbished).
    source: 'PrestaShop Google module: "12-45" ids, condition new/used/refurbished, "in stock"',
    count: 10,
    id: (item) => `${item.n}-${item.n * 3 + 1}`,
    parts: (item, i) => [...googleExact(item), stock(i, 'in stock', 'out of stock'), as('condition', ['new', 'used', 'refurbished'][i % 3] ?? 'new')],
  },
]

// A merchant's spreadsheet (Google Sheets or Excel, edited by hand): title case, blanks a cell keeps
// (a trailing space, a tab, a no-break space pasted from a web page, a line break typed with
// Alt+Enter), Excel's TRUE/FALSE, "€19.99".
const SHEET_STOCK = ['In Stock', 'in stock ', 'in_stock\t', '\u00a0in stock', 'IN STOCK', 'in stock\n', 'In Stock\r\n']
const SHEET_PRICES = [
  (p: number) => `€${fixed(p)}`,
  (p: number) => `${fixed(p)} eur`,
  (p: number) => ` ${fixed(p)} EUR `,
  (p: number) => `${fixed(p)}EUR`,
  (p: number) => `EUR${fixed(p)}`,
]
const SHEET_CATEGORIES = [(item: Item) => ` ${item.kind.googleId} `, (item: Item) => item.kind.googlePath.replaceAll(' > ', '>')]
PROFILES.push({
  source: 'spreadsheet edited by hand (Google Sheets / Excel): "In Stock", trailing blanks, "TRUE", "€19.99"',
  count: 20,
  id: (item) => `SHEET-${item.n}`,
  parts: (item, i) => {
    const category = (SHEET_CATEGORIES[i % 2] ?? String)(item)
    return [
      ...googleExact(item),
      rewritten('availability', SHEET_STOCK[i % SHEET_STOCK.length] ?? '', 'in_stock'),
      rewritten('price', (SHEET_PRICES[i % SHEET_PRICES.length] ?? fixed)(item.price), `${fixed(item.price)} EUR`),
      rewritten('condition', 'New', 'new'),
      rewritten('identifier_exists', 'TRUE', 'yes'),
      rewritten('google_product_category', category, i % 2 === 0 ? item.kind.googleId : item.kind.googlePath),
    ]
  },
})

// An ERP's JSON integration: numbers and booleans as JSON values, which the stream stores as text
// (true as 1, false as empty): a number price gets the channel's currency, `true` reads as yes.
PROFILES.push({
  source: 'ERP JSON integration: price as a JSON number, identifier_exists true (stored "1"), adult false (stored "")',
  count: 15,
  id: (item) => `erp-${item.n}`,
  parts: (item, i) => [
    ...googleExact(item),
    rewritten('price', item.price, `${fixed(item.price)} EUR`, 'currency_added'),
    rewritten('identifier_exists', true, 'yes'),
    as('adult', false),
    ...(i % 5 === 0 ? [as('multipack', 6)] : []),
  ],
})

// A feed written for Meta's catalog, sent to Google as well: Meta's "in stock" and "out of stock".
PROFILES.push({
  source: 'feed written for Meta re-used for Google: "in stock" / "out of stock"',
  count: 10,
  id: (item) => `fb-${item.n}`,
  parts: (item, i) => [...googleExact(item), stock(i, 'in stock', 'out of stock')],
})

// A feed written by someone who read Google's specification: every value as Google writes it.
const DATE = '2026-12-24T10:00+01:00'
PROFILES.push({
  source: "Google's own spelling throughout (a developer following the specification)",
  count: 30,
  id: (item) => `G-${item.n}`,
  parts: (item, i) => [
    ...googleExact(item),
    ...plain(
      [
        {},
        { availability: 'out_of_stock' },
        { availability: 'preorder', availability_date: DATE },
        { availability: 'backorder', availability_date: '2027-01-15' },
        { sale_price: `${fixed(item.price - 1)} EUR`, sale_price_effective_date: '2026-12-01T00:00+01:00/2026-12-24T23:59+01:00' },
        { additional_image_link: `https://cdn.example.com/img/${item.n}-b.jpg,https://cdn.example.com/img/${item.n}-c.jpg` },
      ][i % 6] ?? {},
    ),
    ...(item.kind.apparel ? plain({ size_type: i % 4 === 0 ? 'petite, maternity' : 'regular', size_system: 'EU' }) : []),
    ...(item.kind.en.startsWith('Espresso') ? plain({ unit_pricing_measure: '1 kg', unit_pricing_base_measure: '100 g' }) : []),
    ...plain({ shipping_weight: '0.6 kg', custom_label_0: i % 2 === 0 ? 'bestseller' : 'new-in' }),
  ],
})

/** The clean products, each profile's from its own stretch of the catalog (distinct GTINs). */
export function googleCleanProducts(): CorpusProduct[] {
  let first = 0
  return PROFILES.flatMap((profile, p) => {
    const items = catalog(100 + p, profile.count, first)
    first += profile.count
    return items.map((item, i) => product(profile.id(item), profile.source, profile.parts(item, i)))
  })
}
