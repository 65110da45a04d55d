import { LINE_SHOWN, type ProductRow } from '../catalog/product-stages.js'
import type { ProductAcrossStages, ProductInChannel } from '../channels/product-checks.js'
import { diagnosticsHref } from './diagnostics-page-views.js'
import { html, type Html } from './html.js'
import { badge, dataTable } from './layout.js'
import { rulesPath } from './rule-links.js'

// The product page: one product's row in each stage of its site and every check each
// channel's last export made of it. Ids and values are the client's data: they go through `html`.

/** Attributes and characters of a value the page shows at most: a row may hold thousands, a value megabytes. */
const ATTRIBUTES_SHOWN = 300
const VALUE_SHOWN = 2000

function value(text: string): Html {
  if (text === '') return html`<span class="muted">(empty)</span>`
  if (text.length <= VALUE_SHOWN) return html`<code>${text}</code>`
  return html`<code>${text.slice(0, VALUE_SHOWN)}</code> <span class="muted">… (${text.length} characters)</span>`
}

/** A row's attributes in its stage's column order, then any the stage does not list. */
function attributesTable(row: ProductRow, describedBy: string): Html {
  const names = [...row.columns.filter((column) => column in row.data), ...Object.keys(row.data).filter((name) => !row.columns.includes(name))]
  const rows = names.slice(0, ATTRIBUTES_SHOWN).map(
    (name) =>
      html`<tr>
        <th scope="row">${name}</th>
        <td>${value(row.data[name] ?? '')}</td>
      </tr>`,
  )
  const cut = names.length > ATTRIBUTES_SHOWN ? html`<p class="muted" role="note">The first ${ATTRIBUTES_SHOWN} of ${names.length} attributes.</p>` : ''
  return html`${dataTable(['Attribute', 'Value'], rows, { describedBy })} ${cut}`
}

export function productPage(product: ProductAcrossStages): Html {
  const { site, importRow, channels, moreChannels } = product
  const more = moreChannels > 0 ? html`<p class="muted" role="note">And ${moreChannels} more channels of the site, not shown.</p>` : ''
  return html`<section aria-labelledby="import-heading">
      <h2 id="import-heading">Import stage</h2>
      <p id="import-note" class="muted">The product as its sources sent it.</p>
      ${importRow ? attributesTable(importRow, 'import-note') : html`<p>Not in the import stage: deleted from its source, or not imported yet.</p>`}
    </section>
    ${intermediateSection(product)}
    <section aria-labelledby="product-channels-heading">
      <h2 id="product-channels-heading">Channels</h2>
      ${channels.length === 0 ? html`<p class="muted">The site has no channels.</p>` : channels.map((c) => channelArticle(site.id, product.productId, c))}
      ${more}
    </section>`
}

const EXCLUDED = "The site's rules leave the product out: no channel has it."

/** The intermediate stage: the import row through the site's rules, which every channel reads. */
function intermediateSection({ site, importRow, intermediate }: ProductAcrossStages): Html {
  const rules = html`<a href="${rulesPath(site.id)}">the site's rules</a>`
  if (!importRow) return html``
  if (!intermediate) {
    return html`<p class="muted">The site has no enabled rules (${rules}): its intermediate stage, which every channel reads, is the import stage.</p>`
  }
  const count = `${intermediate.rules} ${intermediate.rules === 1 ? 'rule' : 'rules'}`
  return html`<section aria-labelledby="intermediate-heading">
    <h2 id="intermediate-heading">Intermediate stage</h2>
    <p id="intermediate-note" class="muted">The import row through ${rules} (${count}): what every channel reads.</p>
    ${intermediate.row ? attributesTable(intermediate.row, 'intermediate-note') : html`<p>${badge('excluded')} ${EXCLUDED}</p>`}
  </section>`
}

/** Where the product stands in the channel: in its feed, left out by its checks, or not in its stage. */
function placeOf({ row, channel }: ProductInChannel): Html {
  if (row === null) {
    return html`${badge('not in its stage')} <span class="muted">The channel's filter leaves it out, or no export of the channel has taken it up yet.</span>`
  }
  if (row.inFeed) return html`${badge('in the feed')}`
  const why = channel.validation_mode === 'exclude' ? 'it fails a required rule (validation mode exclude)' : 'its last export left it out'
  return html`${badge('left out')} <span class="muted">Not in the feed: ${why}.</span>`
}

function checksTable(siteId: string, productId: string, entry: ProductInChannel): Html {
  if (entry.row === null) return html``
  if (entry.checks.length === 0) return html`<p class="muted">It passes every check of the ${entry.template} template, and nothing was rewritten.</p>`
  const id = `checks-${entry.channel.id}`
  const rows = entry.checks.map(
    ({ check, value: checked }) =>
      html`<tr>
        <td>${check.attribute}</td>
        <td><code>${check.code}</code></td>
        <td>${badge(check.severity)}</td>
        <td>${check.message}</td>
        <td>${value(checked)}</td>
        <td>${check.hint}</td>
      </tr>`,
  )
  const all = diagnosticsHref({ siteId, channelId: entry.channel.id }, { id: productId })
  return html`<p id="${id}">
      ${entry.checksTotal} ${entry.checksTotal === 1 ? 'check' : 'checks'} of the ${entry.template} template failed or rewrote a value
      ${entry.checksTotal > entry.checks.length ? html`(the first ${entry.checks.length}: <a href="${all}#list-heading">all of them</a>)` : ''}
    </p>
    ${dataTable(['Attribute', 'Code', 'Severity', 'Message', 'Value', 'Hint'], rows, { describedBy: id })}`
}

/** The channel stage's row as it came (the channel's mapping applied), and its line as the feed file has it. */
function rowDetails(row: NonNullable<ProductInChannel['row']>, heading: string): Html {
  const line = row.line === null ? '' : row.line.length < LINE_SHOWN ? row.line : `${row.line}…`
  return html`${
      line
        ? html`<p>Its line in the feed:</p>
            <pre>${line}</pre>`
        : ''
    }
    <details>
      <summary>Its row in the channel's stage</summary>
      ${attributesTable(row, heading)}
    </details>`
}

function channelArticle(siteId: string, productId: string, entry: ProductInChannel): Html {
  const { channel, row } = entry
  const heading = `product-channel-${channel.id}`
  const held = channel.hold ? html`${badge('held')} <span class="muted">Its feed still serves the last delivered export.</span>` : ''
  return html`<article aria-labelledby="${heading}" data-channel="${channel.id}">
    <h3 id="${heading}">${channel.name} <span class="muted">#${channel.id} · ${channel.format} · ${entry.template}</span></h3>
    <p>${placeOf(entry)} ${held}</p>
    ${checksTable(siteId, productId, entry)} ${row ? rowDetails(row, heading) : ''}
    <p><a href="${diagnosticsHref({ siteId, channelId: channel.id })}">Diagnostics of ${channel.name}</a></p>
  </article>`
}
