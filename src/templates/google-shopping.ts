import type { ChannelTemplate, TemplateAttribute, ValueRule } from './template-types.js'

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

const URL_LIST = '^https?://[^\\s,]+(\\s*,\\s*https?://[^\\s,]+)*$'
const ISO_DATE = '^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?$'
const UNIT_MEASURES = ['oz', 'lb', 'mg', 'g', 'kg', 'floz', 'pt', 'qt', 'gal', 'ml', 'cl', 'l', 'cbm', 'in', 'ft', 'yd', 'cm', 'm', 'sqft', 'sqm', 'ct']
const ENERGY_CLASSES = ['A+++', 'A++', 'A+', 'A', 'B', 'C', 'D', 'E', 'F', 'G']
const YES_NO: ValueRule = { kind: 'one_of', values: ['yes', 'no'], aliases: { true: 'yes', false: 'no', '1': 'yes', '0': 'no' } }
const DESTINATIONS = ['Shopping_ads', 'Display_ads', 'Local_inventory_ads', 'Free_listings', 'Free_local_listings', 'cloud_retail', 'local_cloud_retail']

const customLabels: TemplateAttribute[] = [0, 1, 2, 3, 4].map((n) => ({
  name: `custom_label_${n}`,
  requirement: 'optional',
  description: 'A label of your own that campaigns can group and bid on products by.',
  rules: [{ kind: 'max_length', max: 100 }],
}))

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
  attributes: [
    // Basic product data
    {
      name: 'id',
      requirement: 'required',
      description: 'A unique, stable identifier of the product, such as its SKU.',
      rules: [{ kind: 'max_length', max: 50 }],
    },
    { name: 'title', requirement: 'required', description: 'The name of the product as shoppers see it.', rules: [{ kind: 'max_length', max: 150 }] },
    { name: 'description', requirement: 'required', description: 'What the product is and what sets it apart.', rules: [{ kind: 'max_length', max: 5000 }] },
    {
      name: 'link',
      requirement: 'required',
      description: "The address of the product's page in the shop.",
      rules: [{ kind: 'url' }, { kind: 'max_length', max: 2000 }],
    },
    {
      name: 'image_link',
      requirement: 'required',
      description: "The address of the product's main image.",
      rules: [{ kind: 'url' }, { kind: 'max_length', max: 2000 }],
    },
    {
      name: 'additional_image_link',
      requirement: 'optional',
      description: 'Addresses of further images of the product, separated by commas in text feeds.',
      rules: [{ kind: 'pattern', regex: URL_LIST, expected: 'one or more http(s) addresses separated by commas' }],
    },
    {
      name: 'mobile_link',
      requirement: 'optional',
      description: "The address of the product's page for mobile devices, when it differs.",
      rules: [{ kind: 'url' }],
    },
    // Price and availability
    {
      name: 'availability',
      requirement: 'required',
      description: 'Whether the product can be ordered now.',
      rules: [{ kind: 'one_of', values: ['in_stock', 'out_of_stock', 'preorder', 'backorder'] }],
    },
    {
      name: 'availability_date',
      requirement: 'optional',
      description: 'The date a preordered or backordered product ships.',
      rules: [{ kind: 'pattern', regex: ISO_DATE, expected: 'an ISO 8601 date, optionally with a time' }],
    },
    { name: 'price', requirement: 'required', description: 'The regular price with its currency.', rules: [{ kind: 'price' }] },
    {
      name: 'sale_price',
      requirement: 'optional',
      description: 'The reduced price while a sale runs.',
      rules: [{ kind: 'price' }, { kind: 'not_above', attribute: 'price' }],
    },
    { name: 'sale_price_effective_date', requirement: 'optional', description: 'The period in which the sale price applies.', rules: [{ kind: 'date_range' }] },
    {
      name: 'unit_pricing_measure',
      requirement: 'optional',
      description: 'The quantity the product is sold in, for a price per unit.',
      rules: [{ kind: 'measure', units: UNIT_MEASURES }],
    },
    {
      name: 'unit_pricing_base_measure',
      requirement: 'optional',
      description: 'The quantity the price per unit refers to.',
      rules: [{ kind: 'measure', units: UNIT_MEASURES }],
    },
    // Product category
    {
      name: 'google_product_category',
      requirement: 'recommended',
      description: "The product's category in Google's taxonomy, as its numeric id or its full path.",
      rules: [{ kind: 'category' }],
    },
    { name: 'product_type', requirement: 'optional', description: "The product's category in the shop's own tree.", rules: [{ kind: 'max_length', max: 750 }] },
    // Product identifiers
    { name: 'brand', requirement: 'recommended', description: 'The brand of the product.', rules: [{ kind: 'max_length', max: 70 }] },
    {
      name: 'gtin',
      requirement: 'recommended',
      description: 'The Global Trade Item Number (EAN, UPC, JAN, ISBN or ITF-14) of the product.',
      // A wrong GTIN is worse than none: Google disapproves the product rather than limiting it.
      rules: [{ kind: 'gtin' }],
      ruleSeverity: 'error',
      missingUnless: { attribute: 'identifier_exists', values: ['no'] },
    },
    { name: 'mpn', requirement: 'optional', description: "The manufacturer's part number of the product.", rules: [{ kind: 'max_length', max: 70 }] },
    {
      name: 'identifier_exists',
      requirement: 'optional',
      description: 'Whether the product has the unique identifiers of a manufactured good (gtin, or brand with mpn).',
      rules: [YES_NO],
    },
    // Detailed product description
    {
      name: 'condition',
      requirement: 'recommended',
      description: 'Whether the product is new, refurbished or used.',
      rules: [{ kind: 'one_of', values: ['new', 'refurbished', 'used'] }],
    },
    {
      name: 'adult',
      requirement: 'optional',
      description: 'Whether the product is meant for adults only.',
      rules: [YES_NO],
    },
    {
      name: 'multipack',
      requirement: 'optional',
      description: 'How many identical units the shop sells together as one product.',
      rules: [{ kind: 'integer', min: 2 }],
    },
    {
      name: 'is_bundle',
      requirement: 'optional',
      description: 'Whether the product is a main item sold with other items as a bundle.',
      rules: [YES_NO],
    },
    {
      name: 'energy_efficiency_class',
      requirement: 'optional',
      description: "The product's energy label class.",
      rules: [{ kind: 'one_of', values: ENERGY_CLASSES }],
    },
    {
      name: 'min_energy_efficiency_class',
      requirement: 'optional',
      description: 'The lowest class of the energy label scale the product is rated on.',
      rules: [{ kind: 'one_of', values: ENERGY_CLASSES }],
    },
    {
      name: 'max_energy_efficiency_class',
      requirement: 'optional',
      description: 'The highest class of the energy label scale the product is rated on.',
      rules: [{ kind: 'one_of', values: ENERGY_CLASSES }],
    },
    {
      name: 'age_group',
      requirement: 'optional',
      description: 'The age group the product is meant for.',
      rules: [{ kind: 'one_of', values: ['newborn', 'infant', 'toddler', 'kids', 'adult'] }],
    },
    {
      name: 'gender',
      requirement: 'optional',
      description: 'The gender the product is meant for.',
      rules: [{ kind: 'one_of', values: ['male', 'female', 'unisex'] }],
    },
    { name: 'color', requirement: 'optional', description: "The product's colour or colours.", rules: [{ kind: 'max_length', max: 100 }] },
    { name: 'size', requirement: 'optional', description: "The product's size.", rules: [{ kind: 'max_length', max: 100 }] },
    {
      name: 'size_type',
      requirement: 'optional',
      description: 'The cut of an apparel product, such as regular, petite or plus; up to two.',
      rules: [{ kind: 'one_of', values: ['regular', 'petite', 'plus', 'tall', 'big', 'maternity'], list: { max: 2 } }],
    },
    {
      name: 'size_system',
      requirement: 'optional',
      description: 'The country whose sizing the size follows.',
      rules: [{ kind: 'one_of', values: ['AU', 'BR', 'CN', 'DE', 'EU', 'FR', 'IT', 'JP', 'MEX', 'UK', 'US'] }],
    },
    { name: 'material', requirement: 'optional', description: "The product's main fabric or material.", rules: [{ kind: 'max_length', max: 200 }] },
    { name: 'pattern', requirement: 'optional', description: "The product's pattern or print.", rules: [{ kind: 'max_length', max: 100 }] },
    {
      name: 'item_group_id',
      requirement: 'optional',
      description: 'The identifier shared by all variants of one product.',
      rules: [{ kind: 'max_length', max: 50 }],
    },
    { name: 'product_highlight', requirement: 'optional', description: 'A short statement of one of the most relevant points of the product.' },
    { name: 'product_detail', requirement: 'optional', description: 'A technical characteristic of the product, as section, name and value.' },
    // Shopping campaigns and other configurations
    ...customLabels,
    { name: 'promotion_id', requirement: 'optional', description: 'The identifier that ties the product to a promotion.' },
    { name: 'ads_redirect', requirement: 'optional', description: 'An address with tracking parameters used instead of link in ads.' },
    // Destinations
    {
      name: 'excluded_destination',
      requirement: 'optional',
      description: 'The destinations the product must not be shown in.',
      rules: [{ kind: 'one_of', values: DESTINATIONS, list: { max: DESTINATIONS.length } }],
    },
    {
      name: 'included_destination',
      requirement: 'optional',
      description: 'The destinations the product is shown in, beyond the account settings.',
      rules: [{ kind: 'one_of', values: DESTINATIONS, list: { max: DESTINATIONS.length } }],
    },
    { name: 'shopping_ads_excluded_country', requirement: 'optional', description: 'The countries whose Shopping ads must not show the product.' },
    // Shipping
    { name: 'shipping', requirement: 'optional', description: "The product's shipping cost, overriding the account's shipping settings." },
    {
      name: 'shipping_label',
      requirement: 'optional',
      description: 'A label that shipping settings assign costs by.',
      rules: [{ kind: 'max_length', max: 100 }],
    },
    {
      name: 'shipping_weight',
      requirement: 'optional',
      description: 'The weight used to compute the shipping cost.',
      rules: [{ kind: 'measure', units: ['lb', 'oz', 'g', 'kg'] }],
    },
    { name: 'ships_from_country', requirement: 'optional', description: 'The country the product ships from, as an ISO 3166-1 code.' },
    {
      name: 'free_shipping_threshold',
      requirement: 'optional',
      description: 'The order value from which shipping to a country is free, as country and price.',
    },
    // Tax, payment plans, certifications
    { name: 'tax', requirement: 'optional', description: "The product's sales tax rate in the US, by region." },
    { name: 'installment', requirement: 'optional', description: 'A payment plan: the months and the amount paid each month.' },
    { name: 'subscription_cost', requirement: 'optional', description: 'The cost of a subscription bundled with the product: period, periods and amount.' },
    { name: 'loyalty_points', requirement: 'optional', description: 'The loyalty points a shopper earns with the product (Japan).' },
    { name: 'certification', requirement: 'optional', description: "A certification of the product, such as its EU energy label's EPREL code." },
    { name: 'lifestyle_image_link', requirement: 'optional', description: 'The addresses of images of the product in use.' },
  ],
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
