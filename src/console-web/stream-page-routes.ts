import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Batch, BatchStage } from '../db/schema.js'
import { listBatches } from '../streams/batch-store.js'
import { getStream } from '../streams/streams.js'
import type { ConsoleDeps } from './deps.js'
import { html, type Html } from './html.js'
import { badge, page, when } from './layout.js'
import { OffsetQuery, StreamParams } from './page-params.js'
import { accountOfSession, queryInt, sendPage } from './pages.js'

const BATCHES_PER_PAGE = 20

/** A stream: its status and its batches, newest first, with what each stage refused and why. */
export const streamPageRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, { db }) => {
  app.get('/console/streams/:streamId', { schema: { hide: true, params: StreamParams, querystring: OffsetQuery } }, async (request, reply) => {
    const accountId = accountOfSession(request)
    const { streamId } = request.params
    const offset = queryInt(request.query.offset, 0)
    const stream = await getStream(db, accountId, streamId)
    const { batches, total } = await listBatches(db, accountId, stream.id, offset, BATCHES_PER_PAGE)
    const pager = html`<div class="pager">
      ${offset > 0 ? html`<a href="?offset=${Math.max(0, offset - BATCHES_PER_PAGE)}">Newer batches</a>` : ''}
      ${offset + batches.length < total ? html`<a href="?offset=${offset + BATCHES_PER_PAGE}">Older batches</a>` : ''}
    </div>`
    const body = html`<p>
        ${badge(stream.status)} <span class="muted">${stream.type} stream #${stream.id} · ${stream.content_type ?? 'no upload yet'} · ${total} batches</span>
      </p>
      <section aria-labelledby="batches-heading">
        <h2 id="batches-heading">Batches</h2>
        ${batches.length === 0 ? html`<p class="muted">No batches yet.</p>` : batches.map(batchView)} ${pager}
      </section>`
    const trail: [string, string][] = [
      ['Overview', '/console'],
      [stream.name, `/console/streams/${stream.id}`],
    ]
    return sendPage(reply, page({ title: stream.name, session: request.consoleSession, trail, body }))
  })
}

function batchView(batch: Batch): Html {
  return html`<article class="batch" aria-labelledby="batch-${batch.id}">
    <h3 id="batch-${batch.id}">${badge(batch.status)} <code>${batch.id}</code> <span class="muted">${batch.kind} · ${when(batch.created_at)}</span></h3>
    <table>
      <thead>
        <tr>
          <th scope="col">Stage</th>
          <th scope="col">Status</th>
          <th scope="col" class="num">Accepted</th>
          <th scope="col" class="num">Refused</th>
          <th scope="col">Completed</th>
        </tr>
      </thead>
      <tbody>
        ${stageRow('upload', batch.upload_stage)}${stageRow('processing', batch.processing_stage)}
      </tbody>
    </table>
    ${stageErrors('upload', batch.upload_stage)}${stageErrors('processing', batch.processing_stage)}
  </article>`
}

function stageRow(name: string, stage: BatchStage | null): Html {
  if (!stage)
    return html`<tr>
      <td>${name}</td>
      <td colspan="4" class="muted">not imported yet</td>
    </tr>`
  return html`<tr>
    <td>${name}</td>
    <td>${badge(stage.status)}</td>
    <td class="num">${stage.successCount}</td>
    <td class="num">${stage.errorCount}</td>
    <td>${stage.completedAt}</td>
  </tr>`
}

function stageErrors(name: string, stage: BatchStage | null): Html {
  if (!stage || stage.errors.length === 0) return html``
  const items = stage.errors.map(
    (error) =>
      html`<li>
        <strong>${error.message}</strong> × ${error.occurrences}, first on line ${error.example.lineNumber}:
        <pre>${error.example.value}</pre>
      </li>`,
  )
  return html`<p>Refused at ${name}:</p>
    <ul>
      ${items}
    </ul>`
}
