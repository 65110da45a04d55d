import type { TemplateAttribute, ValueRule } from './template-types.js'

// The attributes of Google Merchant Center's product data specification, in its sections, with the
// rules their values follow (google-shopping.ts says which choices they make and why).

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

export const GOOGLE_ATTRIBUTES: readonly TemplateAttribute[] = [
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
]
