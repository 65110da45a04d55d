import type { OperationDocs } from '../http/openapi.js'
import { PID, dataSource, envelope, importHistoryEntry, siteError, sources } from './openapi-examples.js'

// The OpenAPI docs of the data source, run, site report and product data operations (by operationId).

const BASE = 'http://127.0.0.1:8080/platform/v2'
const failed = (summary: string, message: string) => ({ [summary.replace(/\W+/g, '-').toLowerCase()]: { summary, value: { success: false, message } } })
const BOTH = ' Takes the X-Auth-Token or the bearer token.'

const statusAnswer = {
  200: {
    success: {
      summary: 'Finished',
      value: {
        success: true,
        status: 'success',
        message: 'Imported 18370 products',
        links: [{ self: `${BASE}/sites/1/status/${PID}` }, { site: `${BASE}/sites/1` }],
      },
    },
    failed: {
      summary: 'Failed, with a link to its errors',
      value: {
        success: true,
        status: 'failed',
        message: 'The main data source 1 (stream 1 "main catalog") has no products',
        links: [{ self: `${BASE}/sites/1/status/${PID}` }, { site: `${BASE}/sites/1` }, { errors: `${BASE}/sites/1/errors?pid=${PID}` }],
      },
    },
  },
  404: failed('Unknown process', `Process ${PID} of site 1 not found`),
}
const STATUS =
  'The state of a run by its process id: `queued`, `running`, `success` or `failed` (then with an `errors` link). ' +
  "Poll it after starting a run; the site's `processing_status` is `Running` meanwhile. A deleted site's runs answer 404."

const rows = {
  200: {
    ok: {
      value: {
        success: true,
        products: [
          { id: 'SKU1', gtin: '4006381333931', title: 'Shirt', price: '10.50', on_sale: '1' },
          { id: 'SKU3', gtin: '4006381333948', title: 'Socks', price: '4.99', on_sale: '' },
        ],
      },
    },
  },
  400: failed('Unknown field', 'fields: unknown column "colour"; the stage has id, gtin, title, price, on_sale'),
}
const ROWS =
  'A page of the stage in stage order (by product id): `import` (also `intermediate`) is what the last import built, ' +
  '`channel` with a channel id what that channel exported last. Every row has every visible column, `""` where it has no ' +
  'value. `limit` 1 to 1,000 (default 100) and `offset` page through every row once; `fields` picks columns in the order asked ' +
  '(`id,gtin`, repeated, or `fields[0]=id`); `hidden=1` adds columns starting with `___`; `filter` is an SQL condition ' +
  "(`price > 10 AND title LIKE 'S%'`: comparisons, LIKE, IN, IS NULL, BETWEEN, AND/OR/NOT; at most 1,000 characters). " +
  'A page over `PRODUCT_READ_MAX_BYTES` (32 MiB) is a 400 saying how many rows fit; an account has at most ' +
  '`READS_PER_ACCOUNT` (2) reads in flight (429), and a read past 30 s is cancelled (503).'
const NO_ID = ' This form leaves the stage id out, as clients do when it is 0 (the import stage).'
const PROPERTIES = 'The column names of the stage, in stage order, and its number of rows. `hidden=1` adds the columns starting with `___`.'
const properties = { 200: { ok: { value: { success: true, columns: ['id', 'gtin', 'title', 'price', 'on_sale'], products: 18370 } } } }

export const runDocs: Record<string, OperationDocs> = {
  listDataSources: {
    summary: 'List the data sources of a site',
    description:
      'The stream data sources of the site, by id, a page at a time: `limit` (1 to 1,000, default 100) entries after the id ' +
      '`cursor`; `meta.cursor.next` is the cursor of the next page (0 after the last), `previous` goes back.' +
      BOTH,
    responses: {
      200: sources([dataSource, { ...dataSource, id: 2, description: 'prices', import_type: 2, import_id: 2, settings: ['stream : 2'], stream_id: 2 }]),
    },
  },
  createDataSource: {
    summary: 'Connect a stream to a site',
    description:
      'Adds a data source: `stream_id` (a stream of the account), `import_type` (1: main data feed, stacked; 2: additional, joined ' +
      'on the `id_column`), `description` and `status` (`active` or `paused`) are required. `import_empty: true` lets an empty ' +
      'stream be imported, to purge the site; otherwise an empty main source fails the import (1001).' +
      BOTH,
    request: { main: { value: { import_type: '1', description: 'main catalog', stream_id: '1', status: 'active' } } },
    responses: { 201: sources([dataSource]), 400: failed('Unknown stream', 'stream_id: no stream 9 in this account') },
  },
  getDataSource: { summary: 'Read a data source', description: `One data source of the site.${BOTH}`, responses: { 200: sources([dataSource]) } },
  updateDataSource: {
    summary: 'Change a data source',
    description: `Changes \`import_type\`, \`description\`, \`status\` or \`import_empty\`; the stream cannot change (create another data source).${BOTH}`,
    request: { pause: { value: { status: 'paused' } } },
    responses: { 200: sources([{ ...dataSource, status: 'paused' }]) },
  },
  deleteDataSource: {
    summary: 'Disconnect a stream from a site',
    description: `Deletes the data source (the stream and its data stay); the next import rebuilds the site without it.${BOTH}`,
    responses: { 200: { ok: { value: { success: true, message: 'Data source 1 deleted' } } } },
  },
  requestRun: {
    summary: 'Start a run',
    description:
      '`action`: `import`, `export` (the channels of export template `id`), `channel` (channel `id`), `export-all` or `all` ' +
      '(import, then every active channel). A site runs one run at a time and keeps one more waiting; a further request is a 400. ' +
      'A `disabled` site refuses runs, a `paused_upload` site export actions. `estimated_duration` is the average of the last five ' +
      'successful runs of the action, in seconds. Poll the status with the `process_id`.' +
      BOTH,
    returns: 'The run is queued: its process id',
    request: {
      import: { value: { action: 'import' } },
      all: { summary: 'Import, then export every channel', value: { action: 'all' } },
      channel: { summary: 'Export one channel', value: { id: '1', action: 'channel' } },
    },
    responses: {
      200: { ok: { value: { success: true, process_id: PID, estimated_duration: 42.5, message: 'Run queued' } } },
      400: failed('Already queued', `A run of site 1 is already queued (process ${PID}); one run may run and one wait, try again once it has started`),
    },
  },
  getRunStatus: { summary: 'Read the status of a run', description: STATUS, responses: statusAnswer },
  getRunStatusByPost: {
    summary: 'Read the status of a run (POST)',
    description: `${STATUS} The same as GET, for clients that ask with POST.`,
    responses: statusAnswer,
  },
  listSiteErrors: {
    summary: 'List the errors of a run',
    description:
      'The site errors of one run (`pid`; default the latest run of the site), a page at a time (`limit` 1 to 1,000, `offset`). ' +
      '`error` is a numeric code (1xxx imports, 2xxx exports, 9xxx the run; listed in the README), `data` a JSON text of context ' +
      'values, `type` `Error`, `Warning` or `Info`.',
    responses: { 200: envelope('Errors', [siteError]) },
  },
  listImportHistory: {
    summary: 'List the imports of a site',
    description: 'One entry per successful import, newest first, a page at a time (`limit` 1 to 1,000, `offset`).',
    responses: { 200: envelope('Importhistory', [importHistoryEntry]) },
  },
  readStageProducts: { summary: 'Read product rows of a stage', description: ROWS, responses: rows },
  readStageProductsNoStageId: { summary: 'Read product rows of the import stage', description: ROWS + NO_ID, responses: rows },
  readStageProperties: { summary: 'Read the columns of a stage', description: PROPERTIES, responses: properties },
  readStagePropertiesNoStageId: { summary: 'Read the columns of the import stage', description: PROPERTIES + NO_ID, responses: properties },
}
