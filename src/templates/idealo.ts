import type { ChannelTemplate, TemplateAttribute, ValueRule } from './template-types.js'

// idealo's offer data feed for its price comparison (CSV importer documentation,
// idealo.github.io/csv-importer/en/csv, with the field names of the Partner Web Service 2.0), read
// on 2026-11-25. Field names follow it; descriptions are ours.
//
// Choices:
// - required: what idealo cannot list an offer without: sku, title, price, url, deliveryTime.
// - recommended: brand, categoryPath, description and imageUrls, which idealo uses to match and show
//   the offer. eans and hans (manufacturer numbers) are optional each; the identifier group rule
//   warns when both are missing, as idealo matches offers to products by either.
// - Prices and costs are bare numbers with a decimal point in the channel's currency (EUR when the
//   channel sets none): `amount` rules. The same amount written with that currency (`29.99 EUR`,
//   `10 eur`, `EUR 29.99`, `29,99 €`) is exported as the bare number (an info); a comma followed
//   by one or two digits is a decimal comma (`19,99 EUR` is 19.99); another currency, or a
//   thousands separator (`1,299.00`), is refused.
// - used, replica and download are true or false; yes, no, 1 and 0 are read as them (the stream
//   interface stores a JSON `true` as `1`). Listed values are read in any case.
// - eans and imageUrls take several values separated by ";": pattern rules (eans' check digits are
//   therefore not verified; a single EAN could use the gtin rule).
// - Delivery and payment costs are one column per carrier or method (deliveryCosts_<carrier>,
//   paymentCosts_<method>); the common ones are listed, and a group rule each warns when none is set.

const NON_NEGATIVE: readonly ValueRule[] = [{ kind: 'amount', min: 0 }]
const TRUE_FALSE: ValueRule = { kind: 'one_of', values: ['true', 'false'], aliases: { yes: 'true', no: 'false', '1': 'true', '0': 'false' } }
const EANS = '^[0-9]{8,14}( ?; ?[0-9]{8,14})*$'
const URL_LIST = '^https?://[^\\s;]+( ?; ?https?://[^\\s;]+)*$'
const ENERGY_CLASSES = ['A+++', 'A++', 'A+', 'A', 'B', 'C', 'D', 'E', 'F', 'G']

const CARRIERS = ['dhl', 'dpd', 'hermes', 'gls', 'ups', 'fedex', 'deutsche_post']
const PAYMENT_METHODS = ['paypal', 'credit_card', 'cash_in_advance', 'cash_on_delivery', 'invoice', 'direct_debit']
const DELIVERY_COSTS = CARRIERS.map((carrier) => `deliveryCosts_${carrier}`)
const PAYMENT_COSTS = PAYMENT_METHODS.map((method) => `paymentCosts_${method}`)

const costColumns: TemplateAttribute[] = [
  ...DELIVERY_COSTS.map((name): TemplateAttribute => ({
    name,
    requirement: 'optional',
    description: 'The delivery cost to Germany with this carrier, in EUR.',
    rules: NON_NEGATIVE,
  })),
  ...PAYMENT_COSTS.map((name): TemplateAttribute => ({
    name,
    requirement: 'optional',
    description: 'The extra cost of paying with this method, in EUR.',
    rules: NON_NEGATIVE,
  })),
]

export const idealo: ChannelTemplate = {
  name: 'idealo',
  title: 'idealo',
  specification: {
    name: 'idealo offer data feed (CSV importer)',
    version: 'read 2026-11-25',
    url: 'https://idealo.github.io/csv-importer/en/csv',
  },
  defaultFormat: 'csv',
  formats: ['csv', 'tsv'],
  defaultCurrency: 'EUR',
  attributes: [
    { name: 'sku', requirement: 'required', description: "The offer's unique article number in the shop." },
    { name: 'title', requirement: 'required', description: 'The name of the offer, best the brand with the model.', rules: [{ kind: 'max_length', max: 255 }] },
    { name: 'price', requirement: 'required', description: 'The price including VAT, in EUR.', rules: NON_NEGATIVE },
    { name: 'url', requirement: 'required', description: "The address of the offer's page in the shop.", rules: [{ kind: 'url' }] },
    { name: 'deliveryTime', requirement: 'required', description: 'The delivery time as the shop states it, such as "1-3 working days".' },
    { name: 'brand', requirement: 'recommended', description: 'The brand or manufacturer; the shop name for own brands.' },
    {
      name: 'eans',
      requirement: 'optional',
      description: 'The EANs (GTINs) of the product, separated by ";".',
      rules: [{ kind: 'pattern', regex: EANS, expected: 'one or more EANs of 8 to 14 digits separated by ";"' }],
    },
    { name: 'hans', requirement: 'optional', description: 'The manufacturer\'s article numbers (HAN, MPN), separated by ";".' },
    { name: 'categoryPath', requirement: 'recommended', description: "The offer's category in the shop's own tree." },
    { name: 'description', requirement: 'recommended', description: 'A description of the offer.' },
    {
      name: 'imageUrls',
      requirement: 'recommended',
      description: 'Addresses of images of the offer, separated by ";".',
      rules: [{ kind: 'pattern', regex: URL_LIST, expected: 'one or more http(s) addresses separated by ";"' }],
    },
    { name: 'formerPrice', requirement: 'optional', description: 'The price before a reduction, in EUR.', rules: NON_NEGATIVE },
    { name: 'basePrice', requirement: 'optional', description: 'The price per unit where the law requires one, such as per 100 g.' },
    { name: 'packagingUnit', requirement: 'optional', description: 'How many units the offer contains.', rules: [{ kind: 'integer', min: 1 }] },
    { name: 'voucherCode', requirement: 'optional', description: 'A voucher code that lowers the price of the offer.' },
    ...costColumns,
    { name: 'size', requirement: 'optional', description: "The offer's size." },
    { name: 'colour', requirement: 'optional', description: "The offer's colour." },
    { name: 'gender', requirement: 'optional', description: 'The gender the offer is meant for.' },
    { name: 'material', requirement: 'optional', description: "The offer's material." },
    { name: 'used', requirement: 'optional', description: 'Whether the offer is used goods.', rules: [TRUE_FALSE] },
    { name: 'replica', requirement: 'optional', description: 'Whether the offer is a replica rather than an original.', rules: [TRUE_FALSE] },
    { name: 'download', requirement: 'optional', description: 'Whether the offer is delivered as a download.', rules: [TRUE_FALSE] },
    { name: 'eec', requirement: 'optional', description: "The offer's energy efficiency class.", rules: [{ kind: 'one_of', values: ENERGY_CLASSES }] },
    { name: 'deposit', requirement: 'optional', description: 'A deposit charged on top of the price, in EUR.', rules: NON_NEGATIVE },
    // Checkout on idealo ("Direktkauf"): only read from shops that sell through it.
    {
      name: 'fulfillmentType',
      requirement: 'optional',
      description: 'How the offer is shipped, for checkout on idealo.',
      rules: [{ kind: 'one_of', values: ['PARCEL_SERVICE', 'FREIGHT_FORWARDER', 'LETTER', 'DOWNLOAD'] }],
    },
    { name: 'quantityPerOrder', requirement: 'optional', description: 'The most units one checkout order may hold.', rules: [{ kind: 'integer', min: 1 }] },
    { name: 'twoManHandlingFee', requirement: 'optional', description: 'The cost of delivery by two people, in EUR.', rules: NON_NEGATIVE },
    {
      name: 'disposalFee',
      requirement: 'optional',
      description: 'The cost of taking back an old appliance, in EUR; -1 when not offered.',
      rules: [{ kind: 'amount', min: -1 }],
    },
  ],
  groupRules: [
    {
      code: 'identifier_missing',
      attribute: 'eans',
      severity: 'warning',
      any: ['eans', 'hans'],
      message: 'The offer has neither eans nor hans',
      hint: 'idealo matches offers to its products by EAN or manufacturer number: send at least one of them.',
    },
    {
      code: 'delivery_costs_missing',
      attribute: DELIVERY_COSTS[0] ?? 'deliveryCosts_dhl',
      severity: 'warning',
      any: DELIVERY_COSTS,
      message: 'The offer has no delivery cost for any listed carrier',
      hint: `Send the delivery cost in a column deliveryCosts_<carrier>, such as ${DELIVERY_COSTS.join(', ')}.`,
    },
    {
      code: 'payment_costs_missing',
      attribute: PAYMENT_COSTS[0] ?? 'paymentCosts_paypal',
      severity: 'warning',
      any: PAYMENT_COSTS,
      message: 'The offer has no payment cost for any listed method',
      hint: `Send the cost of each payment method in a column paymentCosts_<method> (0.00 when free), such as ${PAYMENT_COSTS.join(', ')}.`,
    },
  ],
}
