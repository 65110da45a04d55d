import escapeHtml from 'escape-html'

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
  for (let i = 0; i < values.length; i++) text += render(values[i]) + (strings[i + 1] ?? '')
  return new Html(text)
}

function render(value: HtmlValue): string {
  if (value instanceof Html) return value.text
  if (Array.isArray(value)) return value.map(render).join('')
  if (value === null || value === undefined || value === false) return ''
  return escapeHtml(String(value))
}

/** A value as JSON inside an attribute (chart data, poll state): escaped like any other text. */
export function jsonAttribute(value: unknown): string {
  return JSON.stringify(value)
}
