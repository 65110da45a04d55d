import { counted, isolatedName } from '../input/text-input.js'
import type { Channel, ChannelHold, HoldReason } from '../db/schema.js'

// Safety stops: an export that would empty most of a live feed is held, as Merchant
// Center's "significant drop" guard and the feed tools that hold a publish when a feed shrinks do.
// The figures are the export's own (its counts and its checks, from the pass that classified its
// rows): deciding costs no second pass. A held export writes nothing; the channel keeps serving
// the last delivered file until the hold is released or a later export passes.

/** What an export would publish, against what the channel delivers now. */
export interface ExportFigures {
  /** Products the file would hold. */
  products: number
  /** Products the delivered file holds; null when nothing was delivered yet (a first export). */
  productsPrevious: number | null
  /** Products the template checked, and those it would leave out. */
  checked: number
  leftOut: number
}

/** A channel's safety settings as numbers; null: that stop is off. */
export interface SafetySettings {
  maxDrop: number | null
  maxLeftOut: number | null
  minProducts: number
}

export function safetySettingsOf(channel: Channel): SafetySettings {
  const share = (value: string | null) => (value === null ? null : Number(value))
  return { maxDrop: share(channel.safety_max_drop), maxLeftOut: share(channel.safety_max_left_out), minProducts: channel.safety_min_products ?? 0 }
}

/** Why the export must be held, with its figures, or undefined when it may be published. */
export function safetyStop(channel: Channel, figures: ExportFigures): Pick<ChannelHold, 'reason' | 'message' | 'threshold' | 'min_products'> | undefined {
  const { maxDrop, maxLeftOut, minProducts } = safetySettingsOf(channel)
  const { products, productsPrevious, checked, leftOut } = figures
  const name = `Channel ${channel.id} (${isolatedName(channel.name)})`
  const held = (reason: HoldReason, threshold: number, message: string) => ({ reason, threshold, min_products: minProducts, message })
  // Fewer than (1 − max drop) × the delivered file's products, from a delivered file of at least the minimum.
  if (maxDrop !== null && productsPrevious !== null && productsPrevious >= minProducts && products < (1 - maxDrop) * productsPrevious) {
    const drop = productsPrevious === 0 ? 0 : 1 - products / productsPrevious
    return held(
      'drop',
      maxDrop,
      `${name} held: its file would hold ${counted(products, 'product')} instead of the ${productsPrevious} delivered, ` +
        `a drop of ${percent(drop)} (safety_max_drop ${percent(maxDrop)}); the last delivered file keeps serving`,
    )
  }
  // More than the max share of what the template checked left out, from at least the minimum checked.
  if (maxLeftOut !== null && checked > 0 && checked >= minProducts && leftOut / checked > maxLeftOut) {
    return held(
      'left_out',
      maxLeftOut,
      `${name} held: its template would leave out ${leftOut} of the ${counted(checked, 'product')} it checked, ` +
        `${percent(leftOut / checked)} (safety_max_left_out ${percent(maxLeftOut)}); the last delivered file keeps serving`,
    )
  }
  return undefined
}

function percent(share: number): string {
  return `${Math.round(share * 1000) / 10}%`
}
