import { readStagePage, stageProperties, type StageRef } from '../catalog/stage-reads.js'
import { channelsOfSite } from '../channels/channels.js'
import type { Site } from '../db/schema.js'
import { AppError } from '../errors.js'
import { getSite } from '../sites/sites.js'
import type { ConsoleDeps } from './deps.js'
import type { ProductBrowserQuery } from './page-params.js'
import { html, type Html } from './html.js'
import { queryInt, queryText } from './pages.js'
import { productHref } from './product-links.js'
import { dataTable } from './layout.js'

const PAGE_ROWS = 25

/**
 * The product browser: one page of the import stage or of a channel's stage, through the same read
 * as GET /product/v2/... (fields, filter, paging, its budget and its messages). A bad filter or an
 * unknown field shows its message above the form and answers 400.
 */
export async function productBrowser(
  deps: ConsoleDeps,
  accountId: string,
  siteSegment: string,
  query: ProductBrowserQuery,
): Promise<{ site: Site; body: Html; status: number }> {
  const site = await getSite(deps.db, accountId, siteSegment)
  const channels = await channelsOfSite(deps.db, site)
  // A site without channels has only its import stage to show.
  const stage = queryText(query.stage, 16) === 'channel' && channels.length > 0 ? 'channel' : 'import'
  const channelId = stage === 'channel' ? queryText(query.channel, 32) || channels[0]?.channel.id : undefined
  const ref = { name: stage, id: channelId }
  // The fields and the filter as typed (the URL's 16 KB bounds them): cut to a length, they could
  // ask another question, and the filter's own limit is refused with its message.
  const fields = queryText(query.fields, Infinity)
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
  const filter = queryText(query.filter, Infinity)
  const offset = queryInt(query.offset, 0)
  const { rows, columns, problem } = await readBrowserPage(deps, { accountId, siteId: site.id, ref, fields, filter, offset })
  const channelOptions = channels.map(
    (details) => html`<option value="${details.channel.id}" ${details.channel.id === channelId ? html` selected` : ''}>${details.channel.name}</option>`,
  )
  const params = (next: number) =>
    new URLSearchParams({ stage, ...(channelId ? { channel: channelId } : {}), fields: fields.join(','), filter, offset: String(next) }).toString()
  const body = html`<form class="filters" method="get" action="/console/sites/${site.id}/products">
      <div>
        <label for="stage">Stage</label
        ><select id="stage" name="stage">
          <option value="import">import</option>
          <option value="channel" ${stage === 'channel' ? html` selected` : ''}>channel</option>
        </select>
      </div>
      ${
        channels.length > 0
          ? html`<div>
              <label for="channel">Channel</label
              ><select id="channel" name="channel">
                ${channelOptions}
              </select>
            </div>`
          : ''
      }
      <div><label for="fields">Fields</label><input id="fields" name="fields" value="${fields.join(',')}" placeholder="id,title,price" /></div>
      <div><label for="filter">Filter</label><input id="filter" name="filter" value="${filter}" size="40" placeholder="price > 10 AND brand = 'Acme'" /></div>
      <div><button type="submit">Show</button></div>
    </form>
    ${problem ? html`<p class="error" role="alert">${problem}</p>` : rowsTable(site.id, columns, rows, offset)}
    <div class="pager">
      ${offset > 0 ? html`<a href="?${params(Math.max(0, offset - PAGE_ROWS))}">Previous page</a>` : ''}
      ${rows.length === PAGE_ROWS ? html`<a href="?${params(offset + PAGE_ROWS)}">Next page</a>` : ''}
    </div>`
  return { site, body, status: problem ? 400 : 200 }
}

interface BrowserRead {
  accountId: string
  siteId: string
  ref: StageRef
  fields: string[]
  filter: string
  offset: number
}

/** The page's rows and columns, or the message of the read's own refusal (a bad filter or field, a page too large). */
async function readBrowserPage(
  deps: ConsoleDeps,
  { accountId, siteId, ref, fields, filter, offset }: BrowserRead,
): Promise<{ rows: Record<string, string>[]; columns: string[]; problem?: string }> {
  try {
    const budget = { maxBytes: deps.config.PRODUCT_READ_MAX_BYTES, timeoutMs: deps.config.PRODUCT_READ_TIMEOUT_MS, slots: deps.readSlots }
    const page = { limit: PAGE_ROWS, offset, fields, hidden: false, filter: filter || undefined }
    const texts = await readStagePage(deps.db, accountId, siteId, ref, page, budget)
    const columns = fields.length > 0 ? fields : (await stageProperties(deps.db, accountId, siteId, ref, false)).columns
    return { rows: texts.map((text) => JSON.parse(text) as Record<string, string>), columns }
  } catch (error) {
    if (!(error instanceof AppError) || error.statusCode !== 400) throw error
    return { rows: [], columns: [], problem: error.message }
  }
}

/** The page's rows; a row's id links to its product page (its rows in every stage and its checks). */
function rowsTable(siteId: string, columns: string[], rows: Record<string, string>[], offset: number): Html {
  if (rows.length === 0) return html`<p class="muted">No products${offset > 0 ? ' on this page' : ''}.</p>`
  const body = rows.map(
    (row) =>
      html`<tr>
        ${columns.map((column) =>
          column === 'id' && row.id ? html`<td><a href="${productHref(siteId, row.id)}">${row.id}</a></td>` : html`<td>${row[column] ?? ''}</td>`,
        )}
      </tr>`,
  )
  return html`<p class="muted">Rows ${offset + 1} to ${offset + rows.length}</p>
    ${dataTable(columns, body, { tenantNames: true })}`
}
