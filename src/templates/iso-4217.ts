// The active alphabetic codes of ISO 4217 ("list one"), as maintained by SIX for ISO, read on
// 2026-11-25, that a price can be in. It includes the fund codes (BOV, CHE, CHW, CLF, COU, MXV, USN,
// UYI, UYW) and the X codes of money (XAF, XCD, XCG, XOF, XPF). Left out are the X codes of no
// money a shop is paid in: precious metals (XAG, XAU, XPD, XPT), bond units (XBA to XBD), XDR, XSU,
// XUA, XTS (reserved for tests) and XXX ("no currency"): a price of 12.99 XXX is a placeholder
// that Google and Meta refuse. Left out as withdrawn: ANG (replaced by XCG in 2025), BGN (Bulgaria joined
// the euro on 2026-01-01), CUC, HRK (euro, 2023), SLL (replaced by SLE), ZWL (replaced by ZWG in 2024).
// The price rule builds a regular expression from this list (template-checks.ts), so it must stay
// plain three-letter uppercase codes.

// One line a first letter keeps the list easy to compare with the standard's.
// prettier-ignore
export const ISO_4217_CODES: readonly string[] = [
  'AED', 'AFN', 'ALL', 'AMD', 'AOA', 'ARS', 'AUD', 'AWG', 'AZN',
  'BAM', 'BBD', 'BDT', 'BHD', 'BIF', 'BMD', 'BND', 'BOB', 'BOV', 'BRL', 'BSD', 'BTN', 'BWP', 'BYN', 'BZD',
  'CAD', 'CDF', 'CHE', 'CHF', 'CHW', 'CLF', 'CLP', 'CNY', 'COP', 'COU', 'CRC', 'CUP', 'CVE', 'CZK',
  'DJF', 'DKK', 'DOP', 'DZD',
  'EGP', 'ERN', 'ETB', 'EUR',
  'FJD', 'FKP',
  'GBP', 'GEL', 'GHS', 'GIP', 'GMD', 'GNF', 'GTQ', 'GYD',
  'HKD', 'HNL', 'HTG', 'HUF',
  'IDR', 'ILS', 'INR', 'IQD', 'IRR', 'ISK',
  'JMD', 'JOD', 'JPY',
  'KES', 'KGS', 'KHR', 'KMF', 'KPW', 'KRW', 'KWD', 'KYD', 'KZT',
  'LAK', 'LBP', 'LKR', 'LRD', 'LSL', 'LYD',
  'MAD', 'MDL', 'MGA', 'MKD', 'MMK', 'MNT', 'MOP', 'MRU', 'MUR', 'MVR', 'MWK', 'MXN', 'MXV', 'MYR', 'MZN',
  'NAD', 'NGN', 'NIO', 'NOK', 'NPR', 'NZD',
  'OMR',
  'PAB', 'PEN', 'PGK', 'PHP', 'PKR', 'PLN', 'PYG',
  'QAR',
  'RON', 'RSD', 'RUB', 'RWF',
  'SAR', 'SBD', 'SCR', 'SDG', 'SEK', 'SGD', 'SHP', 'SLE', 'SOS', 'SRD', 'SSP', 'STN', 'SVC', 'SYP', 'SZL',
  'THB', 'TJS', 'TMT', 'TND', 'TOP', 'TRY', 'TTD', 'TWD', 'TZS',
  'UAH', 'UGX', 'USD', 'USN', 'UYI', 'UYU', 'UYW', 'UZS',
  'VED', 'VES', 'VND', 'VUV',
  'WST',
  'XAF', 'XCD', 'XCG', 'XOF', 'XPF',
  'YER',
  'ZAR', 'ZMW', 'ZWG',
]
