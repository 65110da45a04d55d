import { setAttribute } from './record-guard.js'

/** The text of one child element of an item, its nested elements included. */
interface Frame {
  text: string
  nested: boolean
}

// Elements of HTML that end a line of text where they stand, in a description written as markup.
const LINE_BREAKING = new Set(['br', 'p', 'div', 'li', 'tr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6'])

/**
 * One child element of an item as its events arrive. A leaf's value is its trimmed text (CDATA and
 * entities already decoded by the parser), or its `href` when it has no text (Atom's
 * `<link href="…"/>`). An element with children is one of two kinds. A structure
 * (`<g:shipping><g:country>DE</g:country>…`), whose children stand alone between blanks, is the
 * text of each descendant leaf joined with ':' in document order, empty leaves kept in place so
 * positions still line up: "DE::4.95 EUR". That is not Google's positional form (`DE:::4.95 EUR`,
 * which knows each sub-attribute's slot); a later mapping step can split it by its own rules. Text
 * beside children is markup written unescaped (`Soft <b>cotton</b> shirt.<br/>Washable`): its value
 * is its text as a reader sees it, a line break where a `br`, `p`, `div` or `li` stood.
 */
class ChildElement {
  private readonly frames: Frame[] = [{ text: '', nested: false }]
  private readonly parts: string[] = []
  /** The text below an element with children as written, for mixed content (a leaf's is its frame's). */
  private written = ''
  private mixed = false

  constructor(
    readonly name: string,
    readonly prefixed: boolean,
    private readonly href: string | undefined,
  ) {}

  text(text: string): void {
    this.frames[this.frames.length - 1]!.text += text
    if (this.frames[0]!.nested) this.written += text
  }

  openNested(qualifiedName: string): void {
    const parent = this.frames[this.frames.length - 1]!
    // The first child: the text so far starts what the element has written.
    if (!this.frames[0]!.nested) this.written = this.frames[0]!.text
    parent.nested = true
    this.flushLoose(parent)
    this.frames.push({ text: '', nested: false })
    if (LINE_BREAKING.has(localName(qualifiedName).toLowerCase())) this.written += '\n'
  }

  closeNested(): void {
    const frame = this.frames.pop()!
    if (frame.nested) this.flushLoose(frame)
    else this.parts.push(frame.text.trim())
  }

  value(): string {
    const frame = this.frames[0]!
    if (!frame.nested) return frame.text.trim() || (this.href ?? '')
    this.flushLoose(frame)
    if (this.mixed) return readText(this.written)
    return this.parts.join(':')
  }

  /** Text beside nested elements makes the element mixed content; kept as a part too, where it stood. */
  private flushLoose(frame: Frame): void {
    const loose = frame.text.trim()
    if (loose !== '') {
      this.parts.push(loose)
      this.mixed = true
    }
    frame.text = ''
  }
}

/** Markup's text as a reader sees it: blanks around a line break dropped, no blank lines, trimmed. */
function readText(written: string): string {
  return written
    .replace(/[ \t\r]*\n\s*/g, '\n')
    .replace(/[ \t\r]+/g, ' ')
    .trim()
}

/**
 * The attributes of one item: each child element becomes an attribute named by its local name
 * (`g:price` → price). A repeated element (several `g:additional_image_link`) is its values joined
 * with ',' (empty repeats add nothing), a comma inside a URL among them written `%2C`, as Google's
 * text feeds ask, so that the URLs can be told apart again. When a prefixed element and an unprefixed one share a local
 * name, the prefixed one wins whatever their order: an Atom entry's own `<id>` must not be mixed
 * into the product's `<g:id>`.
 */
export class XmlItem {
  private readonly values = new Map<string, { values: string[]; prefixed: boolean }>()
  private child: ChildElement | undefined
  /** Depth of the open element below the item: 1 is a child of the item. */
  private depth = 0
  private dropped = false

  constructor(
    readonly line: number,
    readonly start: number,
    /** The item element's own attributes (`<offer id="12" available="true">`): its children of the same name win. */
    private readonly own: Record<string, string> = {},
  ) {}

  get tooLong(): boolean {
    return this.dropped
  }

  open(qualifiedName: string, attributes: Record<string, string>): void {
    this.depth++
    if (this.dropped) return
    if (this.depth > 1) this.child?.openNested(qualifiedName)
    else this.child = new ChildElement(childName(qualifiedName, attributes.rel), qualifiedName.includes(':'), attributes.href)
  }

  text(text: string): void {
    if (!this.dropped && this.depth > 0) this.child?.text(text)
  }

  /** Closes an element below the item, or the item itself: then returns true. */
  close(): boolean {
    if (this.depth === 0) return true
    this.depth--
    if (this.dropped || this.child === undefined) return false
    if (this.depth > 0) {
      this.child.closeNested()
      return false
    }
    this.add(this.child)
    this.child = undefined
    return false
  }

  /** Stops collecting: the item is past the size limit and will be refused; what it had is its excerpt. */
  drop(): string {
    const head = JSON.stringify(this.row())
    this.dropped = true
    this.values.clear()
    this.child = undefined
    return head
  }

  row(): Record<string, string> {
    const row: Record<string, string> = {}
    // Namespace declarations and xml:lang or xml:base say how to read the item, not what it is.
    for (const [name, value] of Object.entries(this.own))
      if (!name.startsWith('xml') && !this.values.has(localName(name))) setAttribute(row, localName(name), value)
    for (const [name, { values }] of this.values) setAttribute(row, name, joined(values))
    return row
  }

  private add(child: ChildElement): void {
    const value = child.value()
    const known = this.values.get(child.name)
    if (known === undefined || (child.prefixed && !known.prefixed))
      this.values.set(child.name, { values: value === '' ? [] : [value], prefixed: child.prefixed })
    else if (known.prefixed === child.prefixed && value !== '') known.values.push(value)
  }
}

function joined(values: string[]): string {
  if (values.length < 2) return values[0] ?? ''
  return values.map((value) => (/^https?:\/\//i.test(value) ? value.replaceAll(',', '%2C') : value)).join(',')
}

/**
 * The attribute a child element becomes: its local name; an Atom `<link>` of another `rel` than
 * `alternate` (the product's page) is `link_<rel>` (`link_enclosure`), so that `link` stays one URL.
 */
function childName(qualifiedName: string, rel: string | undefined): string {
  const name = localName(qualifiedName)
  if (name !== 'link' || rel === undefined || rel === '' || rel === 'alternate') return name
  return `link_${rel.replace(/[^\w.-]/g, '_').slice(0, 40)}`
}

export function localName(qualifiedName: string): string {
  return qualifiedName.slice(qualifiedName.indexOf(':') + 1)
}
