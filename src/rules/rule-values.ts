import { BadRequestError } from '../errors.js'
import { checkText, hasUnstorableCharacter } from '../input/text-input.js'
import { isNumberText } from '../db/number-text.js'

// The texts, names, flags and patterns of a rule, and the bounds on them (README "Limits").

export const RULE_LIMITS = {
  /** Rules of a site, and of each channel. */
  rulesPerScope: 100,
  /** Actions of a rule, `then` and `else` together. */
  actionsPerRule: 20,
  /** Conditions and groups of a group. */
  groupItems: 50,
  /** Entries of a map, values of an `in` or `not_in`. */
  listEntries: 1000,
  /** Characters of a pattern. */
  patternChars: 500,
  /** Characters of a value, a separator, a description. */
  valueChars: 2000,
  /**
   * Actions of a scope's rules together. Each is a level of the export's SQL, which Postgres plans
   * in time that grows faster than the levels: 100 rules of 5 actions took 8 s to preview 1 product,
   * 100 of 20 ran Postgres out of memory.
   */
  actionsPerScope: 100,
  /**
   * What an action writes is cut to this many characters: `{x}` repeated in a set grows a value with
   * each action, and three such actions took one Postgres process to 24 GB.
   */
  writtenChars: 100_000,
  /** `{attribute}`s one text of an action names. */
  templateReferences: 50,
}

/** An attribute name as the stages hold one: 1 to 255 characters, no NUL and no lone surrogate. */
export function attributeName(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new BadRequestError(`${field}: an attribute name is required`)
  return storable(checkText(value, field), field)
}

/** Postgres stores neither NUL nor half of a surrogate pair in text or jsonb. */
function storable(text: string, field: string): string {
  if (hasUnstorableCharacter(text)) throw new BadRequestError(`${field}: must not contain NUL or an unpaired surrogate (\\uD800–\\uDFFF)`)
  return text
}

/** A text of a rule: at most RULE_LIMITS.valueChars characters, no NUL. */
export function ruleText(value: unknown, field: string, options: { optional?: boolean; fallback?: string } = {}): string {
  if (value === undefined || value === null) {
    if (options.optional) return options.fallback ?? ''
    throw new BadRequestError(`${field}: is required`)
  }
  if (typeof value !== 'string') throw new BadRequestError(`${field}: must be a text`)
  return storable(checkText(value, field, RULE_LIMITS.valueChars), field)
}

export function ruleFlag(value: unknown, field: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'boolean') throw new BadRequestError(`${field}: must be true or false`)
  return value
}

/** A number as the number operators read one (src/db/number-text.ts). */
export function isNumber(text: string): boolean {
  return isNumberText(text)
}

/**
 * A pattern that Postgres' regular expressions run without backtracking: no back-references and no
 * look-around (the two features that make its engine backtrack), no directors or embedded options,
 * at most RULE_LIMITS.patternChars characters. That it compiles is checked by the database when the
 * rule is saved (rules.ts), which also refuses one too complex to build. Returns the pattern.
 */
export function checkPattern(value: unknown, field: string): string {
  // Its own bound first (in characters, as Postgres counts them), then the bounds of every text.
  if (typeof value === 'string' && value.length > RULE_LIMITS.patternChars && [...value].length > RULE_LIMITS.patternChars) {
    throw new BadRequestError(`${field}: at most ${RULE_LIMITS.patternChars} characters`)
  }
  const text = ruleText(value, field)
  if (text === '') throw new BadRequestError(`${field}: a pattern is required`)
  // An escaped backslash (\\) is a backslash, not the start of an escape: read as a plain character.
  const escapes = text.replace(/\\\\/g, '_')
  if (/\\[1-9]|\\k/.test(escapes)) throw new BadRequestError(`${field}: back-references (\\1 … \\9) are not allowed: they make matching backtrack`)
  if (/(^|[^\\])\(\?[=!<]/.test(escapes)) throw new BadRequestError(`${field}: look-ahead and look-behind ((?= (?! (?<= (?<!) are not allowed`)
  if (/^\*\*\*|(^|[^\\])\(\?[a-z]*\)/.test(escapes)) {
    throw new BadRequestError(`${field}: directors (***) and embedded options ((?i)) are not allowed: use case_sensitive`)
  }
  return text
}
