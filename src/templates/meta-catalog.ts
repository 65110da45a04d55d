import type { ChannelTemplate, TemplateAttribute } from './template-types.js'

// Meta's catalog reference for products ("Supported fields for products: Advantage+ catalog ads and
// commerce", developers.facebook.com/docs/marketing-api/catalog/reference), read on 2026-11-25.
// Attribute names, limits and supported values follow it; descriptions are ours.
//
// Choices:
// - required: the fields Meta rejects an item without (id, title, description, availability,
//   condition, price, link, image_link).
// - brand is recommended, not required: Meta asks for a brand, an mpn or a gtin, any one of them.
//   The identifier group rule makes that an error; brand alone missing is a warning.
// - availability: in stock and out of stock, plus preorder, available for order and discontinued,
//   older values Meta's field list still names; accepted rather than leaving such items out. Each
//   is read in any case, with blanks around it and with `_` for a space (`in_stock`, as a feed
//   written for Google has it); `backorder`, Google's word for an item that can be ordered now and
//   ships later, is read as Meta's `available for order`. The file carries Meta's spelling.
// - condition: new, refurbished and used, and the finer values of Meta's catalog item enum
//   (used_like_new, used_good, used_fair, open_box_new, cpo).
// - optional: the rest. Prices are "9.99 USD" ("use a period as the decimal point; don't use a
//   comma"): `10 eur` is read as `10 EUR` and `19,99 EUR` as `19.99 EUR`, since a comma followed by
//   one or two digits can only be a decimal one; `1,299.00 EUR` is refused. A bare number gets the
//   channel's currency.

const URL_LIST = '^https?://[^\\s,]+(\\s*,\\s*https?://[^\\s,]+)*$'

const customLabels: TemplateAttribute[] = [0, 1, 2, 3, 4].map((n) => ({
  name: `custom_label_${n}`,
  requirement: 'optional',
  description: 'A label of your own for filtering the catalog into product sets.',
  rules: [{ kind: 'max_length', max: 100 }],
}))

export const metaCatalog: ChannelTemplate = {
  name: 'meta_catalog',
  title: 'Meta (Facebook and Instagram) catalog',
  specification: {
    name: 'Meta catalog reference: supported fields for products (Advantage+ catalog ads and commerce)',
    version: 'read 2026-11-25',
    url: 'https://developers.facebook.com/docs/marketing-api/catalog/reference',
  },
  defaultFormat: 'csv',
  formats: ['csv', 'tsv', 'xml'],
  attributes: [
    {
      name: 'id',
      requirement: 'required',
      description: 'A unique identifier of the item, the content id the Meta pixel reports.',
      rules: [{ kind: 'max_length', max: 100 }],
    },
    { name: 'title', requirement: 'required', description: 'The name of the item.', rules: [{ kind: 'max_length', max: 200 }] },
    { name: 'description', requirement: 'required', description: 'A plain-text description of the item.', rules: [{ kind: 'max_length', max: 9999 }] },
    {
      name: 'rich_text_description',
      requirement: 'optional',
      description: 'A description with HTML formatting, shown instead of description where supported.',
    },
    {
      name: 'availability',
      requirement: 'required',
      description: 'Whether the item can be bought now.',
      rules: [
        {
          kind: 'one_of',
          values: ['in stock', 'out of stock', 'preorder', 'available for order', 'discontinued'],
          aliases: { backorder: 'available for order' },
        },
      ],
    },
    {
      name: 'condition',
      requirement: 'required',
      description: 'The condition of the item.',
      rules: [{ kind: 'one_of', values: ['new', 'refurbished', 'used', 'used_like_new', 'used_good', 'used_fair', 'open_box_new', 'cpo'] }],
    },
    { name: 'price', requirement: 'required', description: 'The price of the item with its currency, such as 9.99 USD.', rules: [{ kind: 'price' }] },
    {
      name: 'sale_price',
      requirement: 'optional',
      description: 'The discounted price while a sale runs.',
      rules: [{ kind: 'price' }, { kind: 'not_above', attribute: 'price' }],
    },
    { name: 'sale_price_effective_date', requirement: 'optional', description: 'The period in which the sale price applies.', rules: [{ kind: 'date_range' }] },
    { name: 'link', requirement: 'required', description: "The address of the item's page on the shop's website.", rules: [{ kind: 'url' }] },
    { name: 'image_link', requirement: 'required', description: "The address of the item's main image.", rules: [{ kind: 'url' }] },
    {
      name: 'additional_image_link',
      requirement: 'optional',
      description: 'Addresses of up to 20 further images of the item, separated by commas.',
      rules: [{ kind: 'pattern', regex: URL_LIST, expected: 'one or more http(s) addresses separated by commas' }],
    },
    { name: 'brand', requirement: 'recommended', description: 'The brand of the item.', rules: [{ kind: 'max_length', max: 100 }] },
    { name: 'gtin', requirement: 'optional', description: 'The Global Trade Item Number (UPC, EAN, JAN or ISBN) of the item.', rules: [{ kind: 'gtin' }] },
    { name: 'mpn', requirement: 'optional', description: "The manufacturer's part number of the item.", rules: [{ kind: 'max_length', max: 100 }] },
    {
      name: 'item_group_id',
      requirement: 'optional',
      description: 'The identifier shared by all variants of one product.',
      rules: [{ kind: 'max_length', max: 100 }],
    },
    {
      name: 'google_product_category',
      requirement: 'optional',
      description: "The item's category in Google's taxonomy, as its id or its path.",
      rules: [{ kind: 'category' }],
    },
    {
      name: 'fb_product_category',
      requirement: 'optional',
      description: "The item's category in Meta's own taxonomy, as its id or its path.",
      rules: [{ kind: 'category' }],
    },
    { name: 'product_type', requirement: 'optional', description: "The item's category in the shop's own tree.", rules: [{ kind: 'max_length', max: 750 }] },
    {
      name: 'quantity_to_sell_on_facebook',
      requirement: 'optional',
      description: 'How many units can be sold on Facebook and Instagram, for checkout on Meta.',
      rules: [{ kind: 'integer', min: 0 }],
    },
    { name: 'color', requirement: 'optional', description: "The item's colour.", rules: [{ kind: 'max_length', max: 200 }] },
    { name: 'size', requirement: 'optional', description: "The item's size.", rules: [{ kind: 'max_length', max: 200 }] },
    {
      name: 'gender',
      requirement: 'optional',
      description: 'The gender the item is meant for.',
      rules: [{ kind: 'one_of', values: ['female', 'male', 'unisex'] }],
    },
    {
      name: 'age_group',
      requirement: 'optional',
      description: 'The age group the item is meant for.',
      rules: [{ kind: 'one_of', values: ['adult', 'all ages', 'teen', 'kids', 'toddler', 'infant', 'newborn'] }],
    },
    { name: 'material', requirement: 'optional', description: "The item's main material.", rules: [{ kind: 'max_length', max: 200 }] },
    { name: 'pattern', requirement: 'optional', description: "The item's pattern or print.", rules: [{ kind: 'max_length', max: 100 }] },
    {
      name: 'shipping_weight',
      requirement: 'optional',
      description: 'The weight of the item for shipping.',
      rules: [{ kind: 'measure', units: ['lb', 'oz', 'g', 'kg'] }],
    },
    { name: 'shipping', requirement: 'optional', description: "The item's shipping cost by country and region." },
    {
      name: 'status',
      requirement: 'optional',
      description: 'Whether the item is shown (active) or hidden (archived) in ads and shops.',
      rules: [{ kind: 'one_of', values: ['active', 'archived'] }],
    },
    { name: 'video', requirement: 'optional', description: 'Addresses of videos of the item.' },
    ...customLabels,
  ],
  groupRules: [
    {
      code: 'identifier_missing',
      attribute: 'brand',
      severity: 'error',
      any: ['brand', 'gtin', 'mpn'],
      message: 'The item has none of brand, gtin and mpn',
      hint: 'Meta needs at least one of them: send the brand, or the gtin, or the mpn.',
    },
  ],
}
