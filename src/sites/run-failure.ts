import type { SiteErrorClassification, SiteErrorType } from '../db/schema.js'

/**
 * Numeric codes of site errors (the `error` field). Listed in the README; never renumber one, since
 * clients filter on them. 1xxx: imports, 2xxx: exports, 9xxx: the run itself.
 */
export const SiteErrorCode = {
  emptyMainSource: 1001,
  noMainSource: 1002,
  rowsFailedToParse: 1003,
  streamLocked: 1004,
  streamDeleted: 1005,
  tooManyColumns: 1006,
  sourceFetchFailed: 1007,
  sourceRowsRefused: 1008,
  nothingToExport: 2001,
  channelFilterInvalid: 2002,
  destinationFailed: 2003,
  channelNotFound: 2004,
  exportFailed: 2005,
  feedTooLarge: 2006,
  channelUnwritable: 2007,
  productsFailRequiredRule: 2008,
  productsFailRecommendedRule: 2009,
  exportHeld: 2010,
  runInterrupted: 9001,
  runAbandoned: 9002,
  internalFailure: 9003,
  siteDisabled: 9004,
} as const

export type SiteErrorCodeValue = (typeof SiteErrorCode)[keyof typeof SiteErrorCode]

const SEVERITY: Record<SiteErrorCodeValue, { type: SiteErrorType; classification: SiteErrorClassification }> = {
  1001: { type: 'Error', classification: 'high' },
  1002: { type: 'Error', classification: 'high' },
  1003: { type: 'Warning', classification: 'medium' },
  1004: { type: 'Info', classification: 'low' },
  1005: { type: 'Warning', classification: 'medium' },
  1006: { type: 'Error', classification: 'high' },
  1007: { type: 'Error', classification: 'high' },
  1008: { type: 'Warning', classification: 'medium' },
  2001: { type: 'Info', classification: 'low' },
  2002: { type: 'Error', classification: 'high' },
  2003: { type: 'Error', classification: 'medium' },
  2004: { type: 'Error', classification: 'medium' },
  2005: { type: 'Error', classification: 'high' },
  2006: { type: 'Error', classification: 'high' },
  2007: { type: 'Error', classification: 'high' },
  2008: { type: 'Warning', classification: 'medium' },
  2009: { type: 'Warning', classification: 'low' },
  2010: { type: 'Warning', classification: 'high' },
  9001: { type: 'Warning', classification: 'medium' },
  9002: { type: 'Error', classification: 'high' },
  9003: { type: 'Error', classification: 'high' },
  9004: { type: 'Info', classification: 'low' },
}

export function severityOf(code: SiteErrorCodeValue) {
  return SEVERITY[code]
}

/** A run that ends as `failed` for a reason the site's owner can act on; its message becomes a site error. */
export class RunFailure extends Error {
  constructor(
    readonly code: SiteErrorCodeValue,
    message: string,
    readonly data: Record<string, unknown> = {},
  ) {
    super(message)
    this.name = 'RunFailure'
  }
}
