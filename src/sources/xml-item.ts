import { setAttribute } from './record-guard.js'

/** The text of one child element of an item, its nested elements included. */
interface Frame {
  text: string
  nested: boolean
}

/**
 * One child element of an item as its events arrive. A leaf's value is its trimmed text (CDATA and
 * entities already decoded by the parser), or its `href` when it has no text (Atom's
 * `<link href="…"/>`). An element with children (`<g:shipping><g:country>DE</g:country>…`) is the
 * text of each descendant leaf joined with ':' in document order, empty leaves kept in place so
 * positions still line up: "DE::4.95 EUR". That is not Google's positional form (`DE:::4.95 EUR`,
 * which knows each sub-attribute's slot); a later mapping step can split it by its own rules.
 */
class ChildElement {
  private readonly frames: Frame[] = [{ text: '', nested: false }]
  private readonly parts: string[] = []

  constructor(
    readonly name: string,
    readonly prefixed: boolean,
    private readonly href: string | undefined,
  ) {}

  text(text: string): void {
    this.frames[this.frames.length - 1]!.text += text
  }

  openNested(): void {
    const parent = this.frames[this.frames.length - 1]!
    parent.nested = true
    this.flushLoose(parent)
    this.frames.push({ text: '', nested: false })
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
    return this.parts.join(':')
  }

  /** Text beside nested elements (rare, mixed content) is kept as a part of its own, where it stood. */
  private flushLoose(frame: Frame): void {
    const loose = frame.text.trim()
    if (loose !== '') this.parts.push(loose)
    frame.text = ''
  }
}

/**
 * The attributes of one item: each child element becomes an attribute named by its local name
 * (`g:price` → price). A repeated element (several `g:additional_image_link`) is its values joined
 * with ',' (empty repeats add nothing). When a prefixed element and an unprefixed one share a local
 * name, the prefixed one wins whatever their order: an Atom entry's own `<id>` must not be mixed
 * into the product's `<g:id>`.
 */
export class XmlItem {
  private readonly values = new Map<string, { value: string; prefixed: boolean }>()
  private child: ChildElement | undefined
  /** Depth of the open element below the item: 1 is a child of the item. */
  private depth = 0
  private dropped = false

  constructor(
    readonly line: number,
    readonly start: number,
  ) {}

  get tooLong(): boolean {
    return this.dropped
  }

  open(qualifiedName: string, href: string | undefined): void {
    this.depth++
    if (this.dropped) return
    if (this.depth > 1) this.child?.openNested()
    else this.child = new ChildElement(localName(qualifiedName), qualifiedName.includes(':'), href)
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
    for (const [name, { value }] of this.values) setAttribute(row, name, value)
    return row
  }

  private add(child: ChildElement): void {
    const value = child.value()
    const known = this.values.get(child.name)
    if (known === undefined || (child.prefixed && !known.prefixed)) this.values.set(child.name, { value, prefixed: child.prefixed })
    else if (known.prefixed === child.prefixed && value !== '') known.value = known.value === '' ? value : `${known.value},${value}`
  }
}

export function localName(qualifiedName: string): string {
  return qualifiedName.slice(qualifiedName.indexOf(':') + 1)
}
