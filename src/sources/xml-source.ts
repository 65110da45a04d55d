import { SaxesParser, type SaxesTagPlain } from 'saxes'
import type { RecordGuard } from './record-guard.js'
import { decodedText, sniffedEncoding } from './source-bytes.js'
import { SourceFormatError, type SourceRecord } from './source-types.js'
import { localName, XmlItem } from './xml-item.js'

// saxes hands over a text, a comment or a tag only once it is complete, holding it until then: a
// single text past this many times maxLineBytes (a `<` lost in a huge file) fails the file rather
// than growing without bound. An item merely past maxLineBytes is refused alone.
const HARD_BOUND_FACTOR = 4
// Text is written to saxes in pieces of this size, so the bound above is checked often enough.
const WRITE_CHARS = 65_536
const XML_ENTITIES = new Set(['amp', 'lt', 'gt', 'quot', 'apos'])

/**
 * The items of an XML feed: Google Merchant RSS 2.0 `<item>`s and Atom `<entry>`s, or the elements
 * named `itemElement`, each one record at the line where its start tag is.
 */
export async function* xmlRecords(
  bytes: AsyncIterable<Buffer>,
  { itemElement, charset }: { itemElement?: string; charset?: string },
  guard: RecordGuard,
): AsyncGenerator<SourceRecord> {
  const reader = new XmlItemReader(itemMatcher(itemElement), guard)
  const encodingOf = (head: Buffer) => sniffedEncoding(head, { named: declaredEncoding(head), declared: charset })
  for await (const text of decodedText(bytes, encodingOf)) {
    for (let from = 0; from < text.length; from += WRITE_CHARS) {
      reader.write(from === 0 && text.length <= WRITE_CHARS ? text : text.slice(from, from + WRITE_CHARS))
      for (const record of reader.take()) {
        guard.count()
        yield record
      }
    }
  }
  reader.close()
  for (const record of reader.take()) {
    guard.count()
    yield record
  }
}

/**
 * Turns saxes' events into item records. saxes never fetches anything (no external entities, no
 * external DTD) and expands no entity a DTD declares: `&lol9;` is an "undefined entity" error. A
 * DOCTYPE that declares entities is refused outright all the same, with a message that says why.
 */
class XmlItemReader {
  private readonly parser = new SaxesParser<{ xmlns: false; position: true }>({ xmlns: false, position: true })
  private readonly ready: SourceRecord[] = []
  private item: XmlItem | undefined
  private tagLine = 1
  /** The text of the last write, where an undefined entity's name is looked for. */
  private written = ''
  private tagStart = 0
  private lastEvent = 0

  constructor(
    private readonly isItem: (qualifiedName: string) => boolean,
    private readonly guard: RecordGuard,
  ) {
    const parser = this.parser
    parser.on('doctype', (doctype) => {
      this.mark()
      if (/<!ENTITY/i.test(doctype)) throw new SourceFormatError('the XML declares entities in its DOCTYPE, which is refused: they can expand without bound')
    })
    parser.on('opentagstart', (tag) => {
      this.tagLine = parser.line
      this.tagStart = parser.position - tag.name.length - 1
    })
    parser.on('opentag', (tag) => this.openTag(tag))
    parser.on('text', (text) => this.onText(text))
    parser.on('cdata', (text) => this.onText(text))
    parser.on('closetag', () => this.closeTag())
    parser.on('comment', () => this.mark())
    parser.on('processinginstruction', () => this.mark())
    parser.on('error', (error) => {
      const message = error.message.replace(/^\d+:\d+: /, '')
      throw new SourceFormatError(`the XML is malformed at line ${parser.line}, column ${parser.column}: ${this.explained(message)}`)
    })
  }

  write(text: string): void {
    this.written = text
    this.parser.write(text)
    this.checkRun()
  }

  /**
   * saxes says "undefined entity." without its name: it is the first named one in the text being
   * written that XML does not define (one before it would have failed its own write), most often one
   * of HTML's (`&nbsp;`, `&eacute;`) in a shop's export.
   */
  private explained(message: string): string {
    if (message !== 'undefined entity.') return message
    const name = [...this.written.matchAll(/&([A-Za-z_][\w.-]{0,40});/g)].map((match) => match[1]!).find((found) => !XML_ENTITIES.has(found))
    if (name === undefined) return message
    return `undefined entity &${name}; (XML defines only &amp; &lt; &gt; &quot; &apos;, not HTML's names): write the character itself or its number (&#160;)`
  }

  close(): void {
    this.parser.close()
  }

  /** The records completed by the last write. */
  take(): SourceRecord[] {
    return this.ready.length === 0 ? [] : this.ready.splice(0)
  }

  private openTag(tag: SaxesTagPlain): void {
    this.mark()
    if (this.item !== undefined) {
      this.item.open(tag.name, tag.attributes)
      this.checkSize(this.item)
    } else if (this.isItem(tag.name)) {
      // A self-closing item gets its closetag too, and is an empty row.
      this.item = new XmlItem(this.tagLine, this.tagStart, tag.attributes)
    }
  }

  private onText(text: string): void {
    this.mark()
    if (this.item === undefined) return
    this.item.text(text)
    this.checkSize(this.item)
  }

  private closeTag(): void {
    this.mark()
    const item = this.item
    if (item === undefined || !item.close()) return
    this.item = undefined
    this.checkSize(item)
    if (item.tooLong) return
    const row = item.row()
    this.ready.push(this.guard.row(item.line, row, () => JSON.stringify(row)))
  }

  /**
   * Checked at every event and after every write: a run past the bound fails the file whether it
   * ends within one write or not, so the outcome does not depend on how the file was chunked.
   */
  private checkRun(): void {
    const bound = HARD_BOUND_FACTOR * this.guard.maxLineBytes
    if (this.parser.position - this.lastEvent > bound) {
      throw new SourceFormatError(`the XML has more than ${bound} characters without markup before line ${this.parser.line}: is a tag broken?`)
    }
  }

  /** An event: the run since the one before ends here. */
  private mark(): void {
    this.checkRun()
    this.lastEvent = this.parser.position
  }

  /** An item past maxLineBytes characters (a close lower bound of its bytes) is refused and its content dropped. */
  private checkSize(item: XmlItem): void {
    if (item.tooLong || this.parser.position - item.start <= this.guard.maxLineBytes) return
    this.ready.push(this.guard.tooLong(item.line, item.drop(), 'characters'))
  }
}

/** RSS 2.0 `<item>` or Atom `<entry>` by default; a prefixed name as written; an unprefixed one with any prefix. */
function itemMatcher(itemElement: string | undefined): (qualifiedName: string) => boolean {
  if (itemElement === undefined || itemElement === '') {
    return (name) => {
      const local = localName(name)
      return local === 'item' || local === 'entry'
    }
  }
  if (itemElement.includes(':')) return (name) => name === itemElement
  return (name) => localName(name) === itemElement
}

/** The encoding an XML declaration names (`<?xml version="1.0" encoding="ISO-8859-1"?>`, still common in shop exports), if one does. */
function declaredEncoding(head: Buffer): string | undefined {
  const declaration = /^\s*<\?xml\s[^>]*?\bencoding\s*=\s*["']([A-Za-z][\w.:-]*)["']/.exec(head.toString('latin1', 0, 300))
  return declaration?.[1]
}
