// Hand-built examples for the checks of the built-in channel templates (issue 24): one product that
// passes every check of a template, and for each check code products that differ from it so as to
// fail that code. Values are chosen by the kind of rule the template's HTTP description names, with
// tables for what a rule's kind cannot tell (patterns, group rules): a code no example covers is a
// failure of the test, so a new rule needs an example here.

export type Row = Record<string, string>

export interface Rule {
  kind: string
  max?: number
  min?: number
  values?: string[]
  aliases?: Record<string, string>
  list?: { max: number }
  units?: string[]
  attribute?: string
  regex?: string
}
export interface AttributeJson {
  name: string
  requirement: 'required' | 'recommended' | 'optional'
  rules: Rule[]
}
export interface CheckJson {
  code: string
  attribute: string
  severity: 'error' | 'warning' | 'info'
  message: string
  hint: string
}
export interface TemplateJson {
  name: string
  default_format: 'csv' | 'tsv' | 'xml' | 'ndjson'
  attributes: AttributeJson[]
  group_rules: CheckJson[]
  checks: CheckJson[]
}

/** A product to upload: the good one with `change` applied, and every code it must be reported with. */
export interface Example {
  id: string
  /** The code it is the failing example of; none for the good product and its variants. */
  code?: string
  change: Row
  row: Row
  expected: string[]
  /** The value the feed must carry for the code's attribute (a bare price with the currency added). */
  feedValue?: string
}

/** The GS1 check digit of `payload`: weights 3, 1, 3, … from its rightmost digit, up to the next multiple of 10. */
export function gs1CheckDigit(payload: string): string {
  const sum = [...payload].reverse().reduce((total, digit, i) => total + Number(digit) * (i % 2 === 0 ? 3 : 1), 0)
  return String((10 - (sum % 10)) % 10)
}

const withCheckDigit = (payload: string) => payload + gs1CheckDigit(payload)
/** Valid GTIN-13, GTIN-8, GTIN-12 and GTIN-14, the first one the good product's. */
export const GTINS = ['400638133393', '9638507', '03600029145', '1400638133393'].map(withCheckDigit)
const VALID_GTIN = GTINS[0] ?? ''
const wrongCheckDigit = (gtin: string) => gtin.slice(0, -1) + String((Number(gtin.slice(-1)) + 1) % 10)

/** Good values (the first goes into the good product) and a bad one for every pattern rule, by template.attribute. */
const URLS_BY_COMMA = {
  good: ['https://example.com/a.jpg', 'https://example.com/a.jpg,https://example.com/b.jpg', 'https://example.com/a.jpg, https://example.com/b.jpg'],
  bad: 'example.com/a.jpg',
}
export const PATTERNS: Record<string, { good: string[]; bad: string }> = {
  'google_shopping.additional_image_link': URLS_BY_COMMA,
  'google_shopping.availability_date': { good: ['2026-12-01T10:00+01:00', '2026-12-01', '2026-12-01T10:00:00Z'], bad: '01.12.2026' },
  'meta_catalog.additional_image_link': URLS_BY_COMMA,
  'idealo.eans': { good: [VALID_GTIN, `${VALID_GTIN};${GTINS[1]}`, `${VALID_GTIN} ; ${GTINS[1]}`], bad: `${VALID_GTIN},${GTINS[1]}` },
  'idealo.imageUrls': { good: ['https://example.com/a.jpg', 'https://example.com/a.jpg;https://example.com/b.jpg'], bad: 'www.example.com/a.jpg' },
}

/** Changes that fail a group rule which emptying attributes cannot (a rule that applies only when another attribute holds a value). */
const GROUP_CHANGES: Record<string, Row> = {
  'google_shopping.availability_date_missing': { availability: 'preorder', availability_date: '' },
}

/** The attributes each group rule needs (as the template sources define it): emptying them all fails the rule. */
export const GROUPS: Record<string, RegExp> = {
  'google_shopping.identifier_missing': /^(gtin|mpn)$/,
  'meta_catalog.identifier_missing': /^(brand|gtin|mpn)$/,
  'idealo.identifier_missing': /^(eans|hans)$/,
  'idealo.delivery_costs_missing': /^deliveryCosts_/,
  'idealo.payment_costs_missing': /^paymentCosts_/,
}

/** Codes an example cannot help failing besides its own (an emptied required or recommended attribute's `_missing` is added by itself). */
const ALSO: Record<string, string[]> = {
  // brand is among the identifier rule's `all`: a product without one fails it too.
  'google_shopping.brand_missing': ['identifier_missing'],
}

/** The column the good product carries an attribute in: the product id is the stream's `id`, so Google's and Meta's `id` comes from `item_id`. */
export const sourceOf = (attribute: string) => (attribute === 'id' ? 'item_id' : attribute)

const SUFFIXES: Record<string, string> = {
  max_length: 'too_long',
  category: 'invalid_format',
  amount: 'invalid_number',
  one_of: 'invalid_value',
  url: 'invalid_url',
  price: 'invalid_price',
  gtin: 'invalid_gtin',
  integer: 'invalid_integer',
  number: 'invalid_number',
  measure: 'invalid_measure',
  date_range: 'invalid_date_range',
  pattern: 'invalid_format',
}
const suffixOf = (rule: Rule) => (rule.kind === 'not_above' ? `above_${rule.attribute ?? ''}` : SUFFIXES[rule.kind])

function patternOf(template: string, attribute: string): { good: string[]; bad: string } {
  const entry = PATTERNS[`${template}.${attribute}`]
  if (!entry) throw new Error(`${template}.${attribute} has a pattern rule and no entry in PATTERNS: add a good and a bad value`)
  return entry
}

/** The rule that decides what a good value looks like: max_length and not_above only limit it. */
const primaryRule = (attribute: AttributeJson) => attribute.rules.find((r) => r.kind !== 'max_length' && r.kind !== 'not_above') ?? attribute.rules[0]

/** Values that pass every rule of the attribute; the first goes into the good product, the others into variants of it. */
function goodValues(template: string, attribute: AttributeJson): string[] {
  const rule = primaryRule(attribute)
  const low = rule?.min ?? rule?.max ?? 1
  switch (rule?.kind) {
    case 'pattern':
      return patternOf(template, attribute.name).good
    case 'category':
      return ['Apparel & Accessories > Clothing > Shirts & Tops', '1604', 'Electronics > Print, Copy, Scan & Fax > 3D Printers']
    case 'one_of':
      return [...(rule.values ?? []), ...(rule.list ? [(rule.values ?? []).slice(0, rule.list.max).join(', ')] : [])]
    case 'url':
      return ['https://example.com/p/1', 'http://example.com', 'HTTPS://example.com/p?a=1&b=2#top']
    case 'price':
      // Three decimals where the currency has them, and where the dot is after four digits no thousands separator.
      return ['10.00 EUR', '0.99 USD', '15 GBP', '1.250 KWD', '1234.500 EUR']
    case 'gtin':
      // Google ignores spaces and dashes in a GTIN, and takes up to ten separated by commas.
      return [...GTINS, `${VALID_GTIN.slice(0, 4)} ${VALID_GTIN.slice(4)}`, `${VALID_GTIN.slice(0, 4)}-${VALID_GTIN.slice(4)}`, `${VALID_GTIN},${GTINS[1]}`]
    case 'integer':
      return rule.max === undefined ? [String(low), String(low + 10)] : [String(low)]
    case 'number':
    case 'amount':
      return rule.max === undefined ? [String(low), String(low + 10), `${low + 12}.99`] : [String(low)]
    case 'measure':
      return [`1 ${rule.units?.[0] ?? ''}`, `1.5 ${rule.units?.at(-1) ?? ''}`]
    case 'date_range':
      return ['2026-12-01T00:00+01:00/2026-12-24T23:59+01:00', '2026-12-01/2026-12-24', '2026-12-01T00:00:00Z/2026-12-24T23:59:59Z']
    case 'max_length':
      // Exactly at the limit in characters that take two bytes each: the limit counts characters.
      return ['Short text', 'é'.repeat(rule.max ?? 0)]
    default:
      return ['Short text']
  }
}

/** Values that fail `rule` and no other rule of the attribute (but where ALSO says). */
function badValues(template: string, attribute: AttributeJson, rule: Rule): string[] {
  const below = rule.min === undefined ? [] : [String(rule.min - 1)]
  switch (rule.kind) {
    case 'max_length': {
      const max = rule.max ?? 0
      return [attribute.rules.some((r) => r.kind === 'url') ? `https://example.com/${'a'.repeat(max - 19)}` : 'x'.repeat(max + 1)]
    }
    case 'one_of': {
      // No spelling of a listed value: another word, a listed one with a hyphen for its space, too many of a list.
      const hyphened = (rule.values ?? []).find((v) => /[ _]/.test(v))?.replace(/[ _]/g, '-')
      const tooMany = rule.list ? [Array.from({ length: rule.list.max + 1 }, () => rule.values?.[0] ?? '').join(', ')] : []
      return ['not-a-value', ...(hyphened ? [hyphened] : []), ...tooMany]
    }
    case 'category':
      return ['> Clothing', 'Clothing >> Dresses']
    case 'url':
      return ['ftp://x y', 'www.example.com/p']
    case 'price':
      // A dot before three digits may be a German thousands separator: 1.299 € is 1,299 euros.
      return ['ten', '10.00 XYZ', '1,299.00 EUR', 'EUR 10.00 USD', '-5.00 EUR', '1.299 €', '12.999 EUR', '1.299', '1.000', '12.99 XXX', '12.99 XAU']
    case 'amount':
      return ['abc', ...below, '29.99 USD', '1,299.00', '1.299', '1.299 €']
    case 'not_above':
      return ['20.00 EUR']
    case 'gtin':
      return [
        wrongCheckDigit(VALID_GTIN),
        VALID_GTIN.slice(1, -1),
        `${VALID_GTIN},${wrongCheckDigit(VALID_GTIN)}`,
        Array.from({ length: 11 }, () => VALID_GTIN).join(','),
      ]
    case 'integer':
      return ['abc', ...below, '2.5']
    case 'number':
      return ['abc', ...below, '1,5']
    case 'measure':
      return ['1 parsec', `1${rule.units?.[0] ?? ''}`]
    case 'date_range':
      return ['soon', '2026-12-01T00:00+01:00']
    case 'pattern':
      return [patternOf(template, attribute.name).bad]
    default:
      return []
  }
}

/**
 * Values of the attribute written another way than the channel writes them, with the value the
 * file must carry instead, for its rewrite code (`suffix`: normalised, currency_added,
 * currency_removed); none when the attribute has no such rewrite. Prices stay at or above the good
 * product's price of 10.00 EUR, sale prices at or below it.
 */
function rewriteExamples(attribute: AttributeJson, suffix: string): [string, string][] | undefined {
  const rule = attribute.rules.find((r) => ['one_of', 'category', 'price', 'amount'].includes(r.kind))
  if (!rule) return undefined
  const sale = attribute.rules.some((r) => r.kind === 'not_above')
  switch (`${rule.kind}.${suffix}`) {
    case 'one_of.normalised': {
      const value = rule.values?.[0] ?? ''
      const titled = value.replace(/(^|[ _])([a-z])/g, (_m, sep: string, c: string) => sep + c.toUpperCase())
      const swapped = value.includes('_') ? value.replaceAll('_', ' ') : value.replaceAll(' ', '_')
      const spellings: [string, string][] = [
        [value.toUpperCase(), value],
        [` ${value}\t`, value],
        [titled, value],
        [swapped, value],
        ...Object.entries(rule.aliases ?? {}).map(([alias, target]): [string, string] => [alias.toUpperCase(), target]),
      ]
      const pair = (rule.values ?? []).slice(0, 2)
      if (rule.list && pair.length === 2) spellings.push([`${pair[0]?.toUpperCase()} ,${pair[1]}`, pair.join(', ')])
      return spellings.filter(([written, feed]) => written !== feed)
    }
    case 'category.normalised':
      return [
        [' 1604 ', '1604'],
        ['Apparel & Accessories>Clothing', 'Apparel & Accessories > Clothing'],
        ['Apparel & Accessories  >  Clothing ', 'Apparel & Accessories > Clothing'],
      ]
    case 'price.normalised':
      return sale
        ? [
            ['9 eur', '9 EUR'],
            ['9,50 EUR', '9.50 EUR'],
            ['EUR 10.00', '10.00 EUR'],
            ['10.00 €', '10.00 EUR'],
            [' 9.99  EUR ', '9.99 EUR'],
          ]
        : [
            ['10 eur', '10 EUR'],
            ['10,50 EUR', '10.50 EUR'],
            ['EUR 10.00', '10.00 EUR'],
            ['10.00€', '10.00 EUR'],
            [' 12.99  EUR ', '12.99 EUR'],
          ]
    case 'price.currency_added':
      return sale
        ? [
            ['9.5', '9.50 EUR'],
            ['9,5', '9.50 EUR'],
          ]
        : [
            ['10.5', '10.50 EUR'],
            ['10,5', '10.50 EUR'],
            [' 12 ', '12.00 EUR'],
          ]
    case 'amount.currency_removed':
      return [
        ['29.99 EUR', '29.99'],
        ['EUR 29.99', '29.99'],
        ['29,99 €', '29.99'],
        ['10 eur', '10'],
      ]
    case 'amount.normalised':
      return [
        ['19,99', '19.99'],
        [' 19.99 ', '19.99'],
      ]
    default:
      return undefined
  }
}

export interface Examples {
  good: Row
  examples: Example[]
  /** Codes of the template no example fails. */
  uncovered: string[]
}

/** The good product, its variants and the failing examples of every code of `template`. */
export function buildExamples(template: TemplateJson): Examples {
  const name = template.name
  const good: Row = { id: 'good' }
  for (const attribute of template.attributes) good[sourceOf(attribute.name)] = goodValues(name, attribute)[0] ?? ''
  const product = (id: string, change: Row, expected: string[], code?: string): Example => ({ id, code, change, row: { ...good, ...change, id }, expected })
  // Variant i gives every attribute its i-th good value, where it has one: each value is exported once, without a diagnostic.
  const variants = template.attributes.map((attribute) => [sourceOf(attribute.name), goodValues(name, attribute)] as const)
  const examples: Example[] = [product('good', {}, [])]
  for (let i = 1; variants.some(([, values]) => values.length > i); i++) {
    const change: Row = {}
    for (const [column, values] of variants) {
      const value = values[i]
      if (value !== undefined) change[column] = value
    }
    examples.push(product(`good-${i}`, change, []))
  }
  const missingCodes = (change: Row) =>
    template.attributes.filter((a) => a.requirement !== 'optional' && change[sourceOf(a.name)] === '').map((a) => `${a.name}_missing`)
  const failing = (code: string, changes: Row[], feedValues: string[] = []) =>
    changes.forEach((change, i) => {
      const expected = [...new Set([code, ...missingCodes(change), ...(ALSO[`${name}.${code}`] ?? [])])]
      const feedValue = feedValues[i]
      examples.push({ ...product(i === 0 ? `bad-${code}` : `bad-${code}-${i}`, change, expected, code), ...(feedValue === undefined ? {} : { feedValue }) })
    })
  const uncovered: string[] = []
  for (const check of template.checks) {
    const attribute = template.attributes.find((a) => a.name === check.attribute)
    const column = sourceOf(check.attribute)
    const group = GROUPS[`${name}.${check.code}`]
    const rule = attribute?.rules.find((r) => `${attribute.name}_${suffixOf(r)}` === check.code)
    const rewrite = attribute && rewriteExamples(attribute, check.code.slice(attribute.name.length + 1))
    const groupChange = GROUP_CHANGES[`${name}.${check.code}`]
    if (groupChange) {
      failing(check.code, [groupChange])
    } else if (template.group_rules.some((g) => g.code === check.code) && group) {
      failing(check.code, [Object.fromEntries(template.attributes.filter((a) => group.test(a.name)).map((a) => [sourceOf(a.name), '']))])
    } else if (attribute && check.code === `${attribute.name}_missing`) {
      // Empty, and blank as spreadsheets leave a cell: spaces, a tab, a no-break space.
      failing(check.code, [{ [column]: '' }, { [column]: ' \t ' }, { [column]: '\u00a0' }])
    } else if (rewrite && rewrite.length > 0) {
      failing(
        check.code,
        rewrite.map(([written]) => ({ [column]: written })),
        rewrite.map(([, feed]) => feed),
      )
    } else if (attribute && rule) {
      failing(
        check.code,
        badValues(name, attribute, rule).map((value) => ({ [column]: value })),
      )
    }
    if (!examples.some((e) => e.code === check.code)) uncovered.push(check.code)
  }
  return { good, examples, uncovered }
}
