import { flawedProducts, kept, out, type Flaw } from './flaws.js'
import { as, failing, fixed, group, rewritten, wrongCheckDigit, type CorpusProduct } from './corpus-kit.js'
import { googleExact } from './google-profiles.js'

// The dirty part of the Google Shopping corpus: what real exports get wrong, each product a good
// one with the flaw its source is known for. An error leaves it out (and lists it in the skipped
// file with that code); a warning keeps it.

const price = (value: string) => () => [failing('price', value, 'price_invalid_price')]
const availability = (value: string) => () => [failing('availability', value, 'availability_invalid_value')]
const noIdentifiers = [as('gtin', ''), as('mpn', '')]

const FLAWS: Flaw[] = [
  out('g-bad-price-missing', 'Shopify gift card variant without a price', () => [failing('price', '', 'price_missing')]),
  out('g-bad-price-on-request', 'German shop, price on request: "Preis auf Anfrage"', price('Preis auf Anfrage')),
  out('g-bad-price-words', 'spreadsheet typed by hand: "ten euros"', price('ten euros')),
  out('g-bad-price-thousands', 'US-formatted export with a thousands separator: "1,299.00 EUR"', price('1,299.00 EUR')),
  out('g-bad-price-de-thousands', 'German number format with a thousands point: "1.299,00 €"', price('1.299,00 €')),
  out('g-bad-price-dollar', 'Shopify {{ price | money }} in a US store: "$24.99"', price('$24.99')),
  out('g-bad-price-euro-word', 'German shop writing the currency out: "19,99 Euro"', price('19,99 Euro')),
  out('g-bad-price-rmb', 'marketplace seller writing RMB, not the ISO code CNY: "129.00 RMB"', price('129.00 RMB')),
  out('g-bad-price-negative', 'ERP deposit-return line exported as a product: "-5.00 EUR"', price('-5.00 EUR')),
  out('g-bad-price-two-currencies', 'multi-currency plugin writing both: "19.99 EUR / 21.99 USD"', price('19.99 EUR / 21.99 USD')),
  out('g-bad-price-money-with-currency', 'Shopify {{ price | money_with_currency }}: "€19,99 EUR", the currency twice', price('€19,99 EUR')),
  out('g-bad-gtin-check-digit', 'EAN mistyped in the ERP (wrong check digit)', (item) => [failing('gtin', wrongCheckDigit(item.gtin), 'gtin_invalid_gtin')]),
  out('g-bad-gtin-excel', 'Excel wrote the EAN in scientific notation: "4.00638E+12"', () => [failing('gtin', '4.00638E+12', 'gtin_invalid_gtin')]),
  out('g-bad-gtin-leading-zero', "Excel dropped a UPC's leading zero (11 digits left)", (item) => [failing('gtin', item.upc.slice(1), 'gtin_invalid_gtin')]),
  // Google ignores spaces and dashes in a GTIN and takes up to ten separated by commas: sent as they are.
  kept('g-gtin-trailing-space', 'spreadsheet cell with a trailing space after the EAN', (item) => [as('gtin', `${item.gtin} `)]),
  kept('g-gtin-grouped', 'EAN written in its printed groups: "4 006381 333931"', (item) => [
    as('gtin', `${item.gtin.slice(0, 1)} ${item.gtin.slice(1, 7)} ${item.gtin.slice(7)}`),
  ]),
  kept('g-gtin-dashes', 'UPC with dashes from a US ERP', (item) => [as('gtin', `${item.gtin.slice(0, 4)}-${item.gtin.slice(4)}`)]),
  kept('g-gtin-two', "a bundle's EAN and the UPC of its US edition", (item) => [as('gtin', `${item.gtin},${item.upc}`)]),
  out('g-bad-gtin-list', 'two GTINs, the second mistyped', (item) => [failing('gtin', `${item.gtin},${wrongCheckDigit(item.upc)}`, 'gtin_invalid_gtin')]),
  out('g-bad-availability-available', 'custom export writing "available"', availability('available')),
  out('g-bad-availability-hyphen', 'hand-written feed with a hyphen: "in-stock"', availability('in-stock')),
  out('g-bad-availability-woo-backorder', 'WooCommerce stock status label "On backorder"', availability('On backorder')),
  out('g-bad-availability-woo-meta', 'WooCommerce raw _stock_status meta "instock"', availability('instock')),
  out('g-bad-availability-magento-flag', 'Magento 2 is_in_stock flag "1" mapped to availability', availability('1')),
  out('g-bad-availability-schema', 'schema.org value copied from the product page: "https://schema.org/InStock"', availability('https://schema.org/InStock')),
  out('g-bad-preorder-no-date', 'WooCommerce pre-order plugin: "preorder" without a release date', () => [
    as('availability', 'preorder'),
    failing('availability_date', '', 'availability_date_missing'),
  ]),
  out('g-bad-backorder-no-date', 'Shopify "continue selling when out of stock" mapped to "backorder", no date', () => [
    as('availability', 'backorder'),
    failing('availability_date', '', 'availability_date_missing'),
  ]),
  out('g-bad-meta-preorder', 'feed written for Meta (which has no availability_date) re-used for Google: "preorder"', () => [
    as('availability', 'preorder'),
    group('availability_date_missing'),
  ]),
  kept('g-warn-preorder-german-date', 'German shop writing the release date as "24.12.2026"', () => [
    as('availability', 'preorder'),
    failing('availability_date', '24.12.2026', 'availability_date_invalid_format'),
  ]),
  out('g-bad-link-missing', 'product without a storefront URL (hidden in the shop)', () => [failing('link', '', 'link_missing')]),
  out('g-bad-link-relative', 'Shopware 6 SEO path without the domain: "/detail/…"', (item) => [failing('link', `/detail/${item.slug}`, 'link_invalid_url')]),
  out('g-bad-link-www', 'URL without its scheme: "www.shop.example.com/…"', (item) => [
    failing('link', `www.shop.example.com/p/${item.slug}`, 'link_invalid_url'),
  ]),
  out('g-bad-image-space', 'image file name with a space, not encoded', (item) => [
    failing('image_link', `https://cdn.example.com/img/${item.brand} ${item.n}.jpg`, 'image_link_invalid_url'),
  ]),
  out('g-bad-image-missing', 'product without an image yet', () => [failing('image_link', '', 'image_link_missing')]),
  out('g-bad-title-long', 'keyword-stuffed marketplace title over 150 characters', (item) => [
    failing('title', `${item.title} | ${'Premium Quality Gift Idea for Men Women Kids Birthday Christmas Sale '.repeat(2)}`, 'title_too_long'),
  ]),
  out('g-bad-title-missing', 'variant exported without its parent title', () => [failing('title', '', 'title_missing')]),
  out('g-bad-description-missing', 'Shopify product with an empty body_html', () => [failing('description', '', 'description_missing')]),
  out('g-bad-no-identifiers', 'unbranded import goods: no brand, gtin or mpn', () => [
    failing('brand', '', 'brand_missing'),
    failing('gtin', '', 'gtin_missing'),
    as('mpn', ''),
    group('identifier_missing'),
  ]),
  out('g-bad-brand-only', 'branded product whose EAN was never entered', () => [
    failing('gtin', '', 'gtin_missing'),
    as('mpn', ''),
    group('identifier_missing'),
  ]),
  out('g-bad-json-false-exemption', 'JSON integration sending identifier_exists false (stored empty: no exemption)', () => [
    as('identifier_exists', false),
    failing('gtin', '', 'gtin_missing'),
    as('mpn', ''),
    group('identifier_missing'),
  ]),
  kept('g-warn-brand-mpn', 'branded spare part with a manufacturer part number and no EAN', (item) => [
    failing('gtin', '', 'gtin_missing'),
    as('mpn', item.mpn),
  ]),
  kept('g-warn-handmade', 'handmade goods: identifier_exists "no", no brand', () => [
    failing('brand', '', 'brand_missing'),
    ...noIdentifiers,
    as('identifier_exists', 'no'),
  ]),
  kept('g-warn-handmade-excel', 'handmade goods in a spreadsheet: identifier_exists "FALSE", no brand', () => [
    failing('brand', '', 'brand_missing'),
    ...noIdentifiers,
    rewritten('identifier_exists', 'FALSE', 'no'),
  ]),
  kept('g-warn-handmade-magento', 'Magento 2 boolean label "No" for identifier_exists, with a brand', () => [
    ...noIdentifiers,
    rewritten('identifier_exists', 'No', 'no'),
  ]),
  kept('g-warn-condition-german', 'German shop writing the condition "neu"', () => [failing('condition', 'neu', 'condition_invalid_value')]),
  kept('g-warn-condition-missing', 'WooCommerce has no condition field and none was mapped', () => [failing('condition', '', 'condition_missing')]),
  kept('g-warn-sale-above', 'Shopify compare-at price and price swapped: the sale price above the price', (item) => [
    failing('sale_price', `${fixed(item.price + 5)} EUR`, 'sale_price_above_price'),
  ]),
  kept('g-warn-category-trailing', 'category path joined with an empty last level: "… > Clothing >"', () => [
    failing('google_product_category', 'Apparel & Accessories > Clothing >', 'google_product_category_invalid_format'),
  ]),
  kept('g-warn-category-missing', 'no Google category mapped for this product type', () => [
    failing('google_product_category', '', 'google_product_category_missing'),
  ]),
  kept('g-warn-adult-y', 'ERP flag "Y" for adult', () => [failing('adult', 'Y', 'adult_invalid_value')]),
  kept('g-warn-size-type-three', 'three size types, Google takes two: "petite, maternity, plus"', () => [
    failing('size_type', 'petite, maternity, plus', 'size_type_invalid_value'),
  ]),
  kept('g-info-size-type-spelled', 'size types in title case without a space: "Petite,Maternity"', () => [
    rewritten('size_type', 'Petite,Maternity', 'petite, maternity'),
  ]),
  kept('g-warn-multipack-one', 'ERP exporting multipack 1 for single items', () => [failing('multipack', '1', 'multipack_invalid_integer')]),
  kept('g-warn-unit-measure', 'unit price measure without a space: "750ml"', () => [
    failing('unit_pricing_measure', '750ml', 'unit_pricing_measure_invalid_measure'),
  ]),
  kept('g-warn-weight-comma', 'German shipping weight with a decimal comma: "1,5 kg"', () => [
    failing('shipping_weight', '1,5 kg', 'shipping_weight_invalid_measure'),
  ]),
  kept('g-warn-images-spaces', 'additional images separated by spaces, not commas', (item) => [
    failing('additional_image_link', `https://cdn.example.com/${item.n}-b.jpg https://cdn.example.com/${item.n}-c.jpg`, 'additional_image_link_invalid_format'),
  ]),
  kept('g-warn-mobile-link', 'mobile link without its scheme', (item) => [
    failing('mobile_link', `m.shop.example.com/p/${item.slug}`, 'mobile_link_invalid_url'),
  ]),
  // The feed's id is the stream's product id: one too long for Google's 50 characters.
  out('shopify_DE_7012345678901_40123456789012_bundle_gift_set', 'Shopify id with a suffix a bundling app appends (over 50 characters)', () => [
    group('id_too_long'),
  ]),
  out('g-bad-link-and-image', 'draft product: neither link nor image (the skipped file names the first, link)', () => [
    failing('link', '', 'link_missing'),
    failing('image_link', '', 'image_link_missing'),
  ]),
]

/** Spellings Google's specification (as the template reads it) accepts, written another way. */
const SPELLED: Flaw[] = [
  kept('g-info-price-gbp', 'UK store price with the pound sign: "£24.99"', () => [rewritten('price', '£24.99', '24.99 GBP')]),
  kept('g-info-price-code-first', 'accounting export with the code first: "EUR 19.99"', () => [rewritten('price', 'EUR 19.99', '19.99 EUR')]),
  kept('g-info-price-one-decimal', 'German price with one decimal: "19,9 EUR"', () => [rewritten('price', '19,9 EUR', '19.9 EUR')]),
  kept('g-info-price-bare-comma', 'German ERP, bare price with a decimal comma: "19,99"', () => [rewritten('price', '19,99', '19.99 EUR', 'currency_added')]),
  kept('g-info-json-null-sale', 'JSON integration sending sale_price null (stored empty)', () => [as('sale_price', null)]),
  kept('g-info-destinations', 'destinations as Merchant Center names them: "Display ads, Free listings"', () => [
    rewritten('excluded_destination', 'Display ads, Free listings', 'Display_ads, Free_listings'),
  ]),
  kept('g-info-title-150-characters', 'German title of exactly 150 characters (more bytes: umlauts)', (item) => [
    as('title', `${item.titleDe} `.padEnd(150, 'ä')),
  ]),
  kept('g-warn-handmade-json-zero', 'JSON integration sending identifier_exists 0 (a number): read as no', () => [
    failing('brand', '', 'brand_missing'),
    as('gtin', ''),
    as('mpn', ''),
    rewritten('identifier_exists', 0, 'no'),
  ]),
  out('g-bad-backorder-capitals-no-date', 'ERP writing Google values in capitals: "BACKORDER", no date', () => [
    rewritten('availability', 'BACKORDER', 'backorder'),
    failing('availability_date', '', 'availability_date_missing'),
  ]),
  out('g-bad-pre-order-hyphen', 'WooCommerce pre-order plugin label "Pre-order" (no spelling of preorder: no date rule)', () => [
    failing('availability', 'Pre-order', 'availability_invalid_value'),
  ]),
  out('g-bad-title-and-price', 'half-filled spreadsheet row: no title, price "ten" (the skipped file names title, first)', () => [
    failing('title', '', 'title_missing'),
    failing('price', 'ten', 'price_invalid_price'),
  ]),
  out('g-bad-price-and-identifiers', 'US-formatted price and no identifiers (the skipped file names price before the group rule)', () => [
    failing('price', '1,299.00 EUR', 'price_invalid_price'),
    failing('gtin', '', 'gtin_missing'),
    as('mpn', ''),
    group('identifier_missing'),
  ]),
]

/** Values whose blanks are other than spaces: a no-break space around a price, a tab or a line break alone. */
const BLANKS: Flaw[] = [
  {
    ...kept('g-info-price-nbsp', 'Shopware 6 Twig |currency filter, de-DE: "19,99\u00a0€" (a no-break space before €)', (item) => [
      rewritten('price', `${fixed(item.price).replace('.', ',')}\u00a0€`, `${fixed(item.price)} EUR`),
    ]),
  },
  {
    ...kept('g-info-price-nbsp-around', 'price pasted from a web page with a no-break space after it', (item) => [
      rewritten('price', `${fixed(item.price)} EUR\u00a0`, `${fixed(item.price)} EUR`),
    ]),
  },
  {
    ...kept('g-info-price-magento-decimals', 'Magento 2 catalog export: the price with its six stored decimals, "34.000000"', () => [
      rewritten('price', '34.000000', '34.00 EUR', 'currency_added'),
    ]),
  },
  {
    ...out('g-bad-description-newline', 'WooCommerce description of one stray line break: "\\n"', () => [failing('description', '\n', 'description_missing')]),
  },
  { ...out('g-bad-title-tab', 'spreadsheet cell holding only a tab', () => [failing('title', '\t', 'title_missing')]) },
]

export function googleDirtyProducts(): CorpusProduct[] {
  return flawedProducts([...FLAWS, ...SPELLED, ...BLANKS], 999, (item) => googleExact(item))
}
