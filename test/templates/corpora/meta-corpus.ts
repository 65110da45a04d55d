import { flawedProducts, kept, out, type Flaw } from './flaws.js'
import { as, failing, fixed, group, rewritten, wrongCheckDigit, type CorpusProduct } from './corpus-kit.js'
import { metaCleanProducts, metaExact } from './meta-profiles.js'

// The Meta catalog corpus: the clean products of meta-profiles.ts and what real exports get wrong.
// Meta requires availability, condition and price in its spellings, a link and an image, and one
// of brand, gtin and mpn: an error leaves the item out; the rest are warnings.

const invalid = (attribute: string, value: string | boolean) => () => [failing(attribute, value, `${attribute}_invalid_value`)]
const price = (value: string) => () => [failing('price', value, 'price_invalid_price')]

const FLAWS: Flaw[] = [
  out('m-bad-availability-available', 'custom export writing "available"', invalid('availability', 'available')),
  out('m-bad-availability-hyphen', 'hand-written feed with a hyphen: "in-stock"', invalid('availability', 'in-stock')),
  out('m-bad-availability-woo-meta', 'WooCommerce raw _stock_status meta "instock"', invalid('availability', 'instock')),
  out('m-bad-availability-woo-label', 'WooCommerce stock status label "On backorder" (Meta reads "backorder" only)', invalid('availability', 'On backorder')),
  // A JSON `true` is stored as 1, which is no availability.
  out('m-bad-availability-json-true', 'JSON integration sending availability as a boolean true (stored "1")', invalid('availability', true)),
  out('m-bad-availability-missing', 'variant exported without a stock status', () => [failing('availability', '', 'availability_missing')]),
  out('m-bad-condition-german', 'German shop writing the condition "neu"', invalid('condition', 'neu')),
  out('m-bad-condition-gebraucht', 'German marketplace export: "gebraucht"', invalid('condition', 'gebraucht')),
  out('m-bad-condition-like-new', 'second-hand shop writing "like new" without "used"', invalid('condition', 'like new')),
  out('m-bad-condition-missing', 'WooCommerce has no condition field and none was mapped', () => [failing('condition', '', 'condition_missing')]),
  out('m-bad-price-missing', 'product without a price (price on request)', () => [failing('price', '', 'price_missing')]),
  out('m-bad-price-on-request', 'German shop: "Preis auf Anfrage"', price('Preis auf Anfrage')),
  out('m-bad-price-thousands', 'US-formatted export with a thousands separator: "1,299.00 EUR"', price('1,299.00 EUR')),
  out('m-bad-price-euro-word', 'German shop writing the currency out: "19,99 Euro"', price('19,99 Euro')),
  out('m-bad-price-dollar', 'Shopify {{ price | money }} in a US store: "$19.99"', price('$19.99')),
  out('m-bad-link-missing', 'product hidden in the shop: no URL', () => [failing('link', '', 'link_missing')]),
  out('m-bad-link-relative', 'Shopware 6 SEO path without the domain', (item) => [failing('link', `/detail/${item.slug}`, 'link_invalid_url')]),
  out('m-bad-image-space', 'image file name with a space, not encoded', (item) => [
    failing('image_link', `https://cdn.example.com/img/${item.brand} ${item.n}.jpg`, 'image_link_invalid_url'),
  ]),
  out('m-bad-image-missing', 'product without an image yet', () => [failing('image_link', '', 'image_link_missing')]),
  out('m-bad-title-long', 'marketplace title over 200 characters', (item) => [
    failing('title', `${item.title} | ${'Premium Quality Gift Idea for Men Women Kids Birthday Christmas Sale '.repeat(3)}`, 'title_too_long'),
  ]),
  out('m-bad-description-missing', 'Shopify product with an empty body_html', () => [failing('description', '', 'description_missing')]),
  out('m-bad-no-identifiers', 'unbranded import goods: no brand, gtin or mpn', () => [
    failing('brand', '', 'brand_missing'),
    as('gtin', ''),
    group('identifier_missing'),
  ]),
  kept('m-warn-brand-missing', 'no vendor set, but the EAN is there', () => [failing('brand', '', 'brand_missing')]),
  kept('m-warn-gtin-check-digit', 'EAN mistyped in the ERP (wrong check digit)', (item) => [failing('gtin', wrongCheckDigit(item.gtin), 'gtin_invalid_gtin')]),
  kept('m-warn-gtin-excel', 'Excel wrote the EAN in scientific notation: "4.00638E+12"', () => [failing('gtin', '4.00638E+12', 'gtin_invalid_gtin')]),
  kept('m-warn-sale-above', 'compare-at price and price swapped: the sale price above the price', (item) => [
    failing('sale_price', `${fixed(item.price + 5)} EUR`, 'sale_price_above_price'),
  ]),
  kept('m-warn-quantity-magento', 'Magento 2 stock quantity with its decimals: "12.0000"', () => [
    failing('quantity_to_sell_on_facebook', '12.0000', 'quantity_to_sell_on_facebook_invalid_integer'),
  ]),
  kept('m-warn-quantity-negative', 'oversold item: stock "-3"', () => [
    failing('quantity_to_sell_on_facebook', '-3', 'quantity_to_sell_on_facebook_invalid_integer'),
  ]),
  kept('m-warn-status-draft', 'Shopify product status "draft"', () => [failing('status', 'draft', 'status_invalid_value')]),
  kept('m-warn-gender-women', 'Shopify tag used as gender: "Women"', () => [failing('gender', 'Women', 'gender_invalid_value')]),
  kept('m-warn-age-adults', 'age group written "Adults"', () => [failing('age_group', 'Adults', 'age_group_invalid_value')]),
  kept('m-warn-weight-comma', 'German shipping weight with a decimal comma: "1,2 kg"', () => [
    failing('shipping_weight', '1,2 kg', 'shipping_weight_invalid_measure'),
  ]),
  kept('m-warn-google-category-double', 'category path with a doubled separator: "… >> …"', () => [
    failing('google_product_category', 'Apparel & Accessories >> Clothing', 'google_product_category_invalid_format'),
  ]),
  kept('m-warn-fb-category-trailing', 'category path joined with an empty last level: "Clothing & Accessories > Clothing >"', () => [
    failing('fb_product_category', 'Clothing & Accessories > Clothing >', 'fb_product_category_invalid_format'),
  ]),
  kept('m-warn-images-spaces', 'additional images separated by spaces, not commas', (item) => [
    failing('additional_image_link', `https://cdn.example.com/${item.n}-b.jpg https://cdn.example.com/${item.n}-c.jpg`, 'additional_image_link_invalid_format'),
  ]),
  kept('m-info-price-gbp', 'UK store price with the pound sign: "£24.99"', () => [rewritten('price', '£24.99', '24.99 GBP')]),
  kept('m-info-backorder-capitals', 'feed written for Google in capitals: "BACKORDER"', () => [rewritten('availability', 'BACKORDER', 'available for order')]),
  kept('m-info-discontinued', 'Meta\'s older value for an item no longer sold: "discontinued"', () => [as('availability', 'discontinued')]),
  out('m-bad-condition-and-price', 'half-filled row: condition "neu" and no price (the skipped file names condition, first)', () => [
    failing('condition', 'neu', 'condition_invalid_value'),
    failing('price', '', 'price_missing'),
  ]),
  {
    ...out('m-bad-description-newline', 'WooCommerce description of one stray line break: "\\n"', () => [failing('description', '\n', 'description_missing')]),
  },
  {
    ...kept('m-info-price-nbsp', 'Shopware 6 Twig |currency filter, de-DE: "24,95\u00a0€" (a no-break space before €)', () => [
      rewritten('price', '24,95\u00a0€', '24.95 EUR'),
    ]),
  },
]

export function metaCorpus(): CorpusProduct[] {
  return [...metaCleanProducts(), ...flawedProducts(FLAWS, 299, (item) => metaExact(item))]
}
