import { BadRequestError } from '../errors.js'

// A channel's safety stops as a client sends them (src/exports/safety-stop.ts says what they do),
// and the shares (0 to 1) its settings take: a number, a decimal number as text, "" for none, null
// for "not given".

/** The safety stops as a client sends them: a number, a number as text, "" (off) or null (not given). */
export interface SafetyInput {
  safety_max_drop?: unknown
  safety_max_left_out?: unknown
  safety_min_products?: unknown
}

export interface SafetySettings {
  /** null: off. */
  safetyMaxDrop: number | null
  safetyMaxLeftOut: number | null
  safetyMinProducts: number | null
}

/** The safety stops of a channel created without them. */
export const SAFETY_DEFAULTS: SafetySettings = { safetyMaxDrop: 0.5, safetyMaxLeftOut: 0.5, safetyMinProducts: 100 }
/** The largest safety_min_products: more products than a catalog can hold. */
const MAX_MIN_PRODUCTS = 1_000_000_000

/** The safety stops; a field not given keeps its current value (a new channel's: SAFETY_DEFAULTS), "" turns it off. */
export function readSafety(input: SafetyInput, current: SafetySettings | undefined): SafetySettings {
  const was = current ?? SAFETY_DEFAULTS
  const drop = 'a share of the delivered feed from 0 to 1: an export whose file would drop more is held; "" turns it off'
  const leftOut = 'a share from 0 to 1: an export whose template would leave out more of the products it checked is held; "" turns it off'
  return {
    safetyMaxDrop: readShare(input.safety_max_drop, was.safetyMaxDrop, 'safety_max_drop', drop),
    safetyMaxLeftOut: readShare(input.safety_max_left_out, was.safetyMaxLeftOut, 'safety_max_left_out', leftOut),
    safetyMinProducts: readCount(input.safety_min_products, was.safetyMinProducts),
  }
}

/** A number, or a decimal number as text ("0.9"): not a boolean, hex or an exponent Number() would also read. */
function isDecimal(value: unknown): value is number | string {
  return typeof value === 'number' || (typeof value === 'string' && /^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(value))
}

/** A share from 0 to 1; null (not given) keeps `kept`, "" is none. */
export function readShare(value: unknown, kept: number | null, field: string, meaning: string): number | null {
  if (value === undefined || value === null) return kept
  if (value === '') return null
  const share = Number(value)
  if (!isDecimal(value) || !Number.isFinite(share) || share < 0 || share > 1) throw new BadRequestError(`${field}: must be ${meaning}`)
  return share
}

function readCount(value: unknown, kept: number | null): number | null {
  if (value === undefined || value === null) return kept
  if (value === '') return null
  const count = Number(value)
  if (!isDecimal(value) || !Number.isInteger(count) || count < 0 || count > MAX_MIN_PRODUCTS) {
    throw new BadRequestError(
      `safety_min_products: must be a whole number of products from 0 to ${MAX_MIN_PRODUCTS}: neither stop applies to a smaller baseline; "" turns it off`,
    )
  }
  return count
}
