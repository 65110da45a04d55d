import { ean13, seeded, shopPrice, slug, upc } from './corpus-kit.js'

// The goods of the corpora's shops: a small apparel, home and electronics catalog, with the
// categories each channel's taxonomy files them under (Google's product taxonomy by id or path,
// Meta's product categories, a German shop's own tree as idealo reads it).

export interface Kind {
  en: string
  de: string
  /** Google's product taxonomy: its id and full path. */
  googleId: string
  googlePath: string
  /** Meta's product category path. */
  fbPath: string
  /** The shop's own tree, in German (idealo's categoryPath, Google's product_type). */
  shopPath: string
  apparel: boolean
}

export const KINDS: readonly Kind[] = [
  {
    en: 'Organic Cotton T-Shirt',
    de: 'Bio-Baumwoll T-Shirt',
    googleId: '212',
    googlePath: 'Apparel & Accessories > Clothing > Shirts & Tops',
    fbPath: 'Clothing & Accessories > Clothing > Tops & T-Shirts',
    shopPath: 'Damen > Bekleidung > Shirts & Tops',
    apparel: true,
  },
  {
    en: 'Slim Fit Chinos',
    de: 'Slim Fit Chino',
    googleId: '204',
    googlePath: 'Apparel & Accessories > Clothing > Pants',
    fbPath: 'Clothing & Accessories > Clothing > Pants',
    shopPath: 'Herren > Bekleidung > Hosen',
    apparel: true,
  },
  {
    en: 'Trail Running Shoes',
    de: 'Trailrunning-Schuhe',
    googleId: '187',
    googlePath: 'Apparel & Accessories > Shoes',
    fbPath: 'Clothing & Accessories > Shoes & Footwear',
    shopPath: 'Sport > Laufen > Schuhe',
    apparel: true,
  },
  {
    en: 'Merino Wool Beanie',
    de: 'Merino Mütze',
    googleId: '173',
    googlePath: 'Apparel & Accessories > Clothing Accessories > Hats',
    fbPath: 'Clothing & Accessories > Accessories > Hats',
    shopPath: 'Accessoires > Mützen',
    apparel: true,
  },
  {
    en: 'Stainless Steel Chef Knife 20 cm',
    de: 'Kochmesser Edelstahl 20 cm',
    googleId: '638',
    googlePath: 'Home & Garden > Kitchen & Dining',
    fbPath: 'Home > Kitchen & Dining > Kitchen Knives',
    shopPath: 'Küche > Messer',
    apparel: false,
  },
  {
    en: 'Bluetooth Over-Ear Headphones',
    de: 'Bluetooth Over-Ear Kopfhörer',
    googleId: '505771',
    googlePath: 'Electronics > Audio > Audio Components > Headphones & Headsets',
    fbPath: 'Electronics > Audio > Headphones',
    shopPath: 'Elektronik > Audio > Kopfhörer',
    apparel: false,
  },
  {
    en: 'Espresso Beans 1 kg',
    de: 'Espressobohnen 1 kg',
    googleId: '1868',
    googlePath: 'Food, Beverages & Tobacco > Beverages > Coffee',
    fbPath: 'Food & Beverages > Beverages > Coffee',
    shopPath: 'Lebensmittel > Kaffee',
    apparel: false,
  },
  {
    en: 'Camping Lantern LED',
    de: 'LED Campinglaterne',
    googleId: '1011',
    googlePath: 'Sporting Goods > Outdoor Recreation > Camping & Hiking',
    fbPath: 'Sporting Goods > Outdoor Recreation > Camping',
    shopPath: 'Outdoor > Camping > Beleuchtung',
    apparel: false,
  },
]

export const BRANDS = ['Nordwind', 'Acme Outdoor', 'Hafenkind', 'Urban Thread', 'Kaffeewerk', 'Lumen & Co', 'Bergfalke', 'Sonar Audio']
export const COLORS = ['Black', 'Navy', 'Olive', 'Sand', 'White', 'Burgundy']
export const GERMAN_COLORS: Record<string, string> = { Black: 'Schwarz', Navy: 'Marine', Olive: 'Oliv', Sand: 'Sand', White: 'Weiß', Burgundy: 'Bordeaux' }
export const SIZES = ['XS', 'S', 'M', 'L', 'XL']

/** One sellable variant of the catalog. */
export interface Item {
  n: number
  kind: Kind
  brand: string
  color: string
  size: string
  title: string
  titleDe: string
  slug: string
  gtin: string
  upc: string
  mpn: string
  price: number
  /** The product all its variants share. */
  group: string
}

/** `count` variants from the seed `seed`, numbered from `first` (their GTINs with them). */
export function catalog(seed: number, count: number, first = 0): Item[] {
  const r = seeded(seed)
  return Array.from({ length: count }, (_, i) => {
    const n = first + i
    const kind = r.pick(KINDS)
    const brand = r.pick(BRANDS)
    const color = r.pick(COLORS)
    const size = kind.apparel ? r.pick(SIZES) : ''
    const variant = [color, size].filter((part) => part !== '').join(' / ')
    const germanVariant = [GERMAN_COLORS[color] ?? color, size].filter((part) => part !== '').join(' / ')
    return {
      n,
      kind,
      brand,
      color,
      size,
      title: `${brand} ${kind.en} - ${variant}`,
      titleDe: `${brand} ${kind.de} - ${germanVariant}`,
      slug: slug(`${brand} ${kind.en}`),
      gtin: ean13(n),
      upc: upc(n),
      mpn: `${brand.slice(0, 3).toUpperCase()}-${1000 + n}`,
      price: shopPrice(r),
      group: `${slug(brand).slice(0, 4)}-${KINDS.indexOf(kind)}-${Math.floor(n / 3)}`,
    }
  })
}

export const DESCRIPTION_EN = (item: Item) =>
  `${item.title}. ${item.kind.en} by ${item.brand}, made to last: durable materials, careful finish and a two-year warranty.`
export const DESCRIPTION_DE = (item: Item) =>
  `${item.titleDe}. ${item.kind.de} von ${item.brand} – langlebige Materialien, sorgfältige Verarbeitung, 2 Jahre Garantie.`
