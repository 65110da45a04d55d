import escapeHtml from 'escape-html'
import { reordersAround } from '../input/text-input.js'

// Pages are TypeScript template literals: the compiler checks every value a page shows, and every
// interpolated value is escaped (escape-html, of the jshttp family behind Express) unless it is
// already Html, made by this tag from constant text and escaped values.

/** HTML text that is safe to include as it is. */
export class Html {
  constructor(readonly text: string) {}

  toString(): string {
    return this.text
  }
}

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[]

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let text = strings[0] ?? ''
  for (let i = 0; i < values.length; i++) text += render(values[i], text) + (strings[i + 1] ?? '')
  return new Html(text)
}

/** A value as HTML; `before` is the page up to it, which tells whether it lands in a tag or in text. */
function render(value: HtmlValue, before: string): string {
  if (value instanceof Html) return value.text
  if (Array.isArray(value)) return value.map((item) => render(item, before)).join('')
  if (value === null || value === undefined || value === false) return ''
  const text = escapeHtml(String(value))
  return reordersAround(text) && inElementText(before) ? `<bdi>${text}</bdi>` : text
}

// A tenant's text that could reorder the page's own words after it (a stream named with an unclosed
// U+202E reverses the `#id` beside it) is isolated in <bdi>; other texts are left as they are.

// Elements whose content is text only (a <bdi> there would show as its tag, or be dropped).
const TEXT_ONLY = /^<(title|textarea|option|script|style)\b/i

/** Whether a value after `before` lands in an element's content where <bdi> is allowed: not in a tag, nor in a text-only element. */
function inElementText(before: string): boolean {
  const open = before.lastIndexOf('<')
  // A fragment that starts with text goes into an element's content (titles and options take strings),
  // unless it opened a quoted attribute value (` title="${x}"`).
  if (open === -1) return (before.split('"').length - 1) % 2 === 0
  const tag = before.slice(open)
  return tag.includes('>') && !TEXT_ONLY.test(tag)
}

/** A value as JSON inside an attribute (chart data, poll state): escaped like any other text. */
export function jsonAttribute(value: unknown): string {
  return JSON.stringify(value)
}
