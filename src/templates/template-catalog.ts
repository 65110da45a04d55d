import { googleShopping } from './google-shopping.js'
import { idealo } from './idealo.js'
import { metaCatalog } from './meta-catalog.js'
import type { ChannelTemplate } from './template-types.js'

// The built-in templates. A channel's export_name picks one by name; any other name is a label of
// the account's own and exports unchecked, as every channel did before templates (`generic`).

export const GENERIC_TEMPLATE: ChannelTemplate = {
  name: 'generic',
  title: 'Generic feed',
  specification: { name: 'none: every row is exported as mapped, nothing is checked', version: '1', url: '' },
  defaultFormat: 'csv',
  formats: ['csv', 'tsv', 'ndjson', 'xml'],
  attributes: [],
}

export const TEMPLATES: readonly ChannelTemplate[] = [GENERIC_TEMPLATE, googleShopping, metaCatalog, idealo]

const byName = new Map(TEMPLATES.map((template) => [template.name, template]))

/** The template named `name` exactly, if it is a built-in one. */
export function templateNamed(name: string): ChannelTemplate | undefined {
  return byName.get(name)
}

/**
 * The template an export_name picks: a built-in name, in any case (`Google_Shopping`); any other
 * name picks generic. Only the exact name picks one: existing clients name their channels freely
 * (`google-shopping`), and a label they chose must not start refusing their products.
 */
export function templateOfExportName(exportName: string): ChannelTemplate {
  return byName.get(exportName.trim().toLowerCase()) ?? GENERIC_TEMPLATE
}
