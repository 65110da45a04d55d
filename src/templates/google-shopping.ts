import { GOOGLE_ATTRIBUTES } from './google-shopping-attributes.js'
import type { ChannelTemplate } from './template-types.js'

// Google Merchant Center's product data specification (support.google.com/merchants/answer/7052112),
// read on 2026-11-25. Attribute names, limits and supported values follow it; descriptions are ours.
//
// Choices:
// - required: the attributes Google needs for every product (id, title, description, link,
//   image_link, availability, price).
// - recommended, not required: attributes Google needs only for some products, which a template
//   cannot tell apart: condition (required for used and refurbished goods), gtin and brand (required
//   for new branded goods), google_product_category (Google assigns one when missing). Brand with
//   gtin or mpn is enforced as an error by the identifier group rule, which identifier_exists=no lifts.
// - optional: the rest. Attributes without a rule cost no diagnostic code; the template stays within
//   60 codes (59 today: see checkCodes), so many optional attributes carry one rule only.
// - Google names no help page per attribute by a pattern (its pages have numeric ids): no attributeUrl.
// - Spellings (read 2026-11-27): availability's values are shown as `in_stock` and, in Google's own
//   older pages and RSS samples, `in stock`: both are read, the file carries `in_stock`. adult,
//   is_bundle and identifier_exists take yes, true, no or false in text and XML feeds: the file
//   carries yes or no. `1` and `0` are read as yes and no too: the stream interface stores a JSON
//   `true` as `1`. Every listed value is read in any case and with blanks around it.
// - Prices: "Number plus currency (use ISO 4217)", `15.00 USD`. `10 eur` is read as `10 EUR` (an
//   ISO code in lower case names the same currency); `19,99 EUR` as `19.99 EUR`: Google stopped
//   reading a decimal comma for German feeds in June 2022 and wants a point, and a comma followed by
//   one or two digits can only be one. `1,299.00 EUR` (a thousands separator) is refused.
// - availability_date is required for preorder and backorder (availability_date_missing); gtin is
//   not missing where identifier_exists says the product has none.
// - XML: the group attributes (shipping, tax, installment, …) are written as sub-elements, as
//   Google's XML specification has them, from their colon form (`US:CA:Overnight:16.00 USD`, several
//   separated by commas); text feeds keep the colon form. Repeated attributes (additional_image_link,
//   size_type, …) are one element per comma-separated value.

export const googleShopping: ChannelTemplate = {
  name: 'google_shopping',
  title: 'Google Shopping',
  specification: {
    name: 'Google Merchant Center product data specification',
    version: 'read 2026-11-25',
    url: 'https://support.google.com/merchants/answer/7052112',
  },
  defaultFormat: 'xml',
  formats: ['xml', 'tsv'],
  xmlPrefix: 'g',
  xmlGroups: {
    shipping: ['country', 'region', 'service', 'price', 'min_handling_time', 'max_handling_time', 'min_transit_time', 'max_transit_time'],
    tax: ['country', 'region', 'rate', 'tax_ship'],
    installment: ['months', 'amount', 'downpayment', 'credit_type'],
    subscription_cost: ['period', 'period_length', 'amount'],
    loyalty_points: ['name', 'points_value', 'ratio'],
    product_detail: ['section_name', 'attribute_name', 'attribute_value'],
    certification: ['certification_authority', 'certification_name', 'certification_code'],
    free_shipping_threshold: ['country', 'price_threshold'],
  },
  xmlRepeated: ['additional_image_link', 'lifestyle_image_link', 'size_type', 'excluded_destination', 'included_destination', 'shopping_ads_excluded_country'],
  attributes: GOOGLE_ATTRIBUTES,
  groupRules: [
    {
      code: 'availability_date_missing',
      attribute: 'availability_date',
      severity: 'error',
      all: ['availability_date'],
      when: { attribute: 'availability', values: ['preorder', 'backorder'] },
      message: 'availability_date is required for a product on preorder or backorder, and empty',
      hint: 'Send the date the product ships (ISO 8601, such as 2026-12-24T13:00-0800) with availability preorder or backorder.',
    },
    {
      code: 'identifier_missing',
      attribute: 'gtin',
      severity: 'error',
      all: ['brand'],
      any: ['gtin', 'mpn'],
      unless: { attribute: 'identifier_exists', values: ['no'] },
      message: 'The product has no brand, or neither gtin nor mpn, and identifier_exists does not say it lacks them',
      hint: 'Send the brand with the gtin or the mpn; for custom-made or otherwise unidentified goods send identifier_exists = no.',
    },
  ],
}
