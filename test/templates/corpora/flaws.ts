import { catalog, type Item } from './catalog-items.js'
import { product, type CorpusProduct, type Part } from './corpus-kit.js'

// The dirty part of each corpus: products of the catalog, each written as the template's channel
// writes it and then as one real export gets something wrong (or merely writes another way).

/** One way real exports write a product: who writes it so, what it changes, and whether the channel leaves it out. */
export interface Flaw {
  id: string
  source: string
  parts: (item: Item) => Part[]
  leftOut: boolean
}

export const out = (id: string, source: string, parts: (item: Item) => Part[]): Flaw => ({ id, source, parts, leftOut: true })
export const kept = (id: string, source: string, parts: (item: Item) => Part[]): Flaw => ({ id, source, parts, leftOut: false })

/** A product per flaw, from the catalog of `seed` (ids from 5000): `exact` as the channel writes it, then the flaw. */
export function flawedProducts(flaws: Flaw[], seed: number, exact: (item: Item, flaw: Flaw) => Part[]): CorpusProduct[] {
  const items = catalog(seed, flaws.length, 5000)
  return flaws.map((flaw, i) => {
    const item = items[i] as Item
    return product(flaw.id, flaw.source, [...exact(item, flaw), ...flaw.parts(item)], flaw.leftOut)
  })
}
