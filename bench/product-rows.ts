import { createWriteStream } from 'node:fs'
import { once } from 'node:events'

const COLORS = ['black', 'white', 'red', 'blue', 'green', 'grey', 'navy', 'beige']
const BRANDS = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Stark', 'Wayne', 'Wonka']
const WORDS = ['organic', 'cotton', 'shirt', 'classic', 'fit', 'soft', 'durable', 'premium', 'everyday', 'summer', 'winter', 'slim']

function words(seed: number, count: number): string {
  const out: string[] = []
  for (let i = 0; i < count; i++) out.push(WORDS[(seed * 7 + i * 13) % WORDS.length] ?? 'item')
  return out.join(' ')
}

/**
 * A realistic feed row: 15 attributes, about 500 bytes, mostly strings with a few numbers and a
 * boolean as integrators send them; valid GTINs and sale prices below the price, as a shop has.
 * No backslashes or tabs, so the same file is valid input for a bare one-column COPY.
 */
/** A GTIN-13 with its GS1 check digit: the digits weighted 1, 3, 1, … from the left sum to a multiple of 10. */
function gtin13(base12: number): string {
  const digits = String(base12).padStart(12, '0')
  const sum = [...digits].reduce((total, digit, i) => total + Number(digit) * (i % 2 === 0 ? 1 : 3), 0)
  return digits + String((10 - (sum % 10)) % 10)
}

export function productRow(i: number, version = 0): string {
  const price = Number(((i % 9000) / 100 + 9.5 + version).toFixed(2))
  const row = {
    id: `SKU-${String(i).padStart(8, '0')}`,
    gtin: gtin13(400638100000 + i),
    title: `${BRANDS[i % BRANDS.length]} ${words(i, 4)} ${i}`,
    description: `${words(i + 3, 18)} ${words(i + 5, 12)}`,
    brand: BRANDS[i % BRANDS.length],
    color: COLORS[i % COLORS.length],
    size: ['XS', 'S', 'M', 'L', 'XL'][i % 5],
    price,
    sale_price: `${(price * 0.9).toFixed(2)} EUR`,
    availability: i % 11 === 0 ? 'out of stock' : 'in stock',
    stock: i % 97,
    link: `https://shop.example.com/p/${i}`,
    image_link: `https://cdn.example.com/img/${i % 1000}/${i}.jpg`,
    category: `Apparel > ${words(i, 1)} > ${words(i + 1, 1)}`,
    on_sale: i % 3 === 0,
  }
  return JSON.stringify(row)
}

/** The attributes of every productRow, in its order: the columns a channel of every column exports. */
export const PRODUCT_COLUMNS = Object.keys(JSON.parse(productRow(0)) as Record<string, unknown>)

/** Rows `from` .. `from + rows - 1`; with `step`, every step-th of them (a spread-out change set). */
export async function writeNdjson(file: string, rows: number, version = 0, from = 0, step = 1): Promise<number> {
  const out = createWriteStream(file)
  let bytes = 0
  let buffer = ''
  for (let n = 0; n < rows; n++) {
    const i = from + n * step
    buffer += `${productRow(i, version)}\n`
    if (buffer.length > 1 << 20) {
      bytes += buffer.length
      if (!out.write(buffer)) await once(out, 'drain')
      buffer = ''
    }
  }
  bytes += buffer.length
  out.end(buffer)
  await once(out, 'finish')
  return bytes
}
