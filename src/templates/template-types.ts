import type { FeedFormat } from '../db/schema.js'

// A channel template is data: the attributes a channel's specification names, how much each is
// needed, and the rules its values follow. The checks are compiled to SQL (template-checks.ts) and
// run inside the export, on the rows the export classifies as changed (docs/design.md 11).

/** How much a channel needs an attribute: a required one failing leaves its product out of the feed. */
export type Requirement = 'required' | 'recommended' | 'optional'

export type Severity = 'error' | 'warning' | 'info'

/** A rule on one attribute's value; it is checked only when the value is not empty. */
export type ValueRule =
  /** At most `max` characters. */
  | { kind: 'max_length'; max: number }
  /**
   * One of `values`, the spellings the file carries. Any other spelling of one of them is accepted
   * and rewritten (an `info`): any case, blanks around it, `_` and a space alike, and each of
   * `aliases` (another spelling the channel's specification shows, such as `true` for `yes`, by its
   * folded form). With `list`, up to `list.max` of them separated by commas (`petite, maternity`).
   */
  | { kind: 'one_of'; values: readonly string[]; aliases?: Readonly<Record<string, string>>; list?: { max: number } }
  /** An absolute http or https URL without spaces. */
  | { kind: 'url' }
  /**
   * A price: a decimal number, a space, an ISO 4217 currency code (`15.00 USD`). Other spellings of
   * one are rewritten (an `info`): the code in lower case or before the amount, `€` or `£` for EUR
   * or GBP, blanks around or missing between, a decimal comma followed by one or two digits
   * (`19,99 EUR`); a bare number takes the channel's currency. Anything else, a thousands
   * separator included (`1,299.00 USD`, ambiguous), fails.
   */
  | { kind: 'price' }
  /**
   * An amount in the channel's currency, written as a bare decimal number (`29.99`, at least `min`).
   * The same amount written with the channel's currency (`29.99 EUR`, `EUR 29.99`, `29,99 €`) or a
   * decimal comma is rewritten to the bare number (an `info`); another currency fails.
   */
  | { kind: 'amount'; min?: number }
  /** A price not above the price in `attribute` (same currency); checked when both are valid prices. */
  | { kind: 'not_above'; attribute: string }
  /** A GTIN: 8, 12, 13 or 14 digits whose last is the check digit of the others (GS1). */
  | { kind: 'gtin' }
  /** A whole number within the bounds. */
  | { kind: 'integer'; min?: number; max?: number }
  /** A decimal number (`.` as the separator) within the bounds. */
  | { kind: 'number'; min?: number; max?: number }
  /** A decimal number, a space, one of `units` (`1.5 kg`). */
  | { kind: 'measure'; units: readonly string[] }
  /** Two ISO 8601 date-times separated by `/` (`2026-02-24T11:07+0100/2026-02-29T23:07+0100`). */
  | { kind: 'date_range' }
  /**
   * A category of Google's product taxonomy: its numeric id, or its full path with ` > ` between
   * the levels. Blanks around the value or other spacing around `>` are rewritten (an `info`).
   */
  | { kind: 'category' }
  /** Matches the Postgres regular expression `regex` (POSIX, `~`); `expected` says in words what it wants. */
  | { kind: 'pattern'; regex: string; expected: string }

export interface TemplateAttribute {
  /** The attribute's name as the channel's specification writes it; a mapped column `g:<name>` is the same attribute. */
  name: string
  requirement: Requirement
  /** One sentence from the channel's specification: what the attribute holds. */
  description: string
  rules?: readonly ValueRule[]
  /** Overrides the severity of this attribute's value rules (required attributes fail with `error`, others with `warning`). */
  ruleSeverity?: Severity
  /** A recommended attribute is not reported missing while `attribute` holds one of `values` (a spelling of them). */
  missingUnless?: Condition
}

/** An attribute holds a spelling of one of `values` (compared as its rules write the value in the file). */
export interface Condition {
  attribute: string
  values: readonly string[]
}

/**
 * A rule across attributes: every attribute of `all` has a value and at least one of `any` has
 * (when `any` is given), unless the attribute `unless.attribute` holds one of `unless.values`;
 * with `when`, only for products whose `when.attribute` holds one of `when.values`.
 */
export interface GroupRule {
  /** The code diagnostics name it by: lowercase words joined by `_`. */
  code: string
  /** The attribute diagnostics show it under, and whose value they quote. */
  attribute: string
  severity: 'error' | 'warning'
  all?: readonly string[]
  any?: readonly string[]
  unless?: Condition
  when?: Condition
  message: string
  hint: string
}

export interface ChannelTemplate {
  /** What a channel's export_name picks it by: lowercase words joined by `_`. */
  name: string
  title: string
  /** The public specification the template follows, with its version (or the date it was read). */
  specification: { name: string; version: string; url: string }
  defaultFormat: FeedFormat
  /** The formats the channel reads. */
  formats: readonly FeedFormat[]
  /** Every attribute the specification names; attributes not listed are exported unchecked. */
  attributes: readonly TemplateAttribute[]
  groupRules?: readonly GroupRule[]
  /** The currency of the channel's `amount` attributes when the channel sets none (idealo's EUR). */
  defaultCurrency?: string
  /** The namespace prefix of the attributes' elements in format xml (Google's `g`): column `price` is written `<g:price>`. */
  xmlPrefix?: string
  /** A link to the specification's page on an attribute, for the hints: `{name}` is replaced. */
  attributeUrl?: string
  /**
   * Format xml: attributes whose text form is sub-attributes separated by colons
   * (`US:CA:Overnight:16.00 USD`), each written as an element with a sub-element per non-empty
   * sub-attribute, in this order; several values separated by commas are several elements.
   */
  xmlGroups?: Readonly<Record<string, readonly string[]>>
  /** Format xml: attributes whose several values, separated by commas in text feeds, are one element each. */
  xmlRepeated?: readonly string[]
}
