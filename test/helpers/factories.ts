import { expect } from 'vitest'
import { accountLimits } from '../../src/accounts/object-limits.js'
import type { ChannelInput } from '../../src/channels/channel-input.js'
import { createChannel, type ChannelDetails } from '../../src/channels/channels.js'
import { credentialBoxOf } from '../../src/auth/credential-box.js'
import type { DataSource, FeedFormat, Project, Site, SiteTag, Stream } from '../../src/db/schema.js'
import { newFeedToken } from '../../src/feeds/feed-urls.js'
import { createOutboundGuard } from '../../src/net/outbound-guard.js'
import { createDataSource, type DataSourceInput } from '../../src/sites/data-sources.js'
import { createProject, type ProjectInput } from '../../src/sites/projects.js'
import type { SiteInput } from '../../src/sites/site-input.js'
import { createSite } from '../../src/sites/sites.js'
import { createTag, type TagInput } from '../../src/sites/tags.js'
import { createStream } from '../../src/streams/streams.js'
import { eventually } from './eventually.js'
import { client, JSON_API, NDJSON, platformClient, uniqueName, type Client, type Credential, type Method, type Response, type SiteScope } from './clients.js'
import type { TestAccount, TestContext } from './test-app.js'

// State a test is not about, seeded through the domain functions (db handle first, scoped by the
// account) rather than through HTTP: set-ups stay fast, and a test's requests are the ones it is about.
//
//   const given = factories(t)
//   const account = await given.account()
//   const site = await given.site({ account })
//   const source = await given.dataSource({ account, site })   // with a new stream of its own

/** Whatever names an account: a TestAccount, or anything carrying its id. */
export type AccountRef = Pick<TestAccount, 'accountId'>
export type Ref = { id: string }

export interface Given {
  account(name?: string): Promise<TestAccount>
  /** A project (default name "Shop"). */
  project(options: { account: AccountRef } & ProjectInput): Promise<Project>
  /** A site, in a new project unless one is given (default title "Shop <n>"). */
  site(options: { account: AccountRef; project?: Ref } & SiteInput): Promise<Site>
  /** `count` sites in one new project, each with the same settings (titles "Shop 0", "Shop 1", ...). */
  sites(count: number, options: { account: AccountRef } & SiteInput): Promise<Site[]>
  /** A stream (default: chunked, a name no other stream has). */
  stream(options: { account: AccountRef; name?: string; type?: string }): Promise<Stream>
  /** A data source of the site (default: active, import_type 1), on a new stream unless one is given. */
  dataSource(options: { account: AccountRef; site: Ref; stream?: Ref } & DataSourceInput): Promise<DataSource>
  /** A channel of the site (default: "Google", template "google-shopping", csv, the built-in destination). */
  channel(options: { account: AccountRef; site: Ref } & ChannelInput): Promise<ChannelDetails>
  tag(options: { account: AccountRef; site: Ref } & TagInput): Promise<SiteTag>
  /**
   * A channel as a version before the save rules could have stored it: written straight into the
   * tables, with the built-in destination, so that only an export meets its settings.
   */
  legacyChannel(options: { account: AccountRef; site: Ref; format: FeedFormat; mapping?: unknown[]; filenames: unknown[] }): Promise<string>
}

let counter = 0

/** Call at the top level of a file, after useTestApp: the factories use `t`'s database once it is ready. */
export function factories(t: TestContext): Given {
  const limits = () => accountLimits(t.config)
  const given: Given = {
    account: (name) => t.account(name),
    project: ({ account, ...input }) => createProject(t.db, account.accountId, { name: 'Shop', ...input }, limits()),
    site: async ({ account, project, ...input }) => {
      const projectId = input.project_id ?? project?.id ?? (await given.project({ account })).id
      return createSite(t.db, account.accountId, { title: `Shop ${++counter}`, ...input, project_id: projectId }, limits())
    },
    sites: async (count, { account, ...input }) => {
      const project = await given.project({ account })
      const sites: Site[] = []
      for (let i = 0; i < count; i++) sites.push(await given.site({ account, project, title: `Shop ${i}`, ...input }))
      return sites
    },
    stream: ({ account, name = uniqueName(), type }) => createStream(t.db, account.accountId, { name, type }, t.clock.now()),
    dataSource: async ({ account, site, stream, ...input }) => {
      const streamId = input.stream_id ?? stream?.id ?? (await given.stream({ account })).id
      const body = { import_type: 1, description: 'feed', status: 'active', ...input, stream_id: streamId }
      return createDataSource(t.db, account.accountId, site.id, body, limits())
    },
    channel: ({ account, site, ...input }) => {
      const guard = createOutboundGuard({ allowPrivate: t.config.ALLOW_PRIVATE_DESTINATIONS })
      const connectors = { guard, credentials: credentialBoxOf(t.config) }
      return createChannel(t.db, account.accountId, site.id, { name: 'Google', export_name: 'google-shopping', ...input }, limits(), connectors)
    },
    tag: ({ account, site, ...input }) => createTag(t.db, account.accountId, site.id, input, limits()),
    legacyChannel: async ({ account, site, format, mapping = [], filenames }) => {
      const accountId = account.accountId
      const template = await t.db
        .insertInto('export_template')
        .values({ account_id: accountId, name: uniqueName('legacy') })
        .returning('id')
        .executeTakeFirstOrThrow()
      const stored = { format, mapping: JSON.stringify(mapping), filenames: JSON.stringify(filenames) }
      const channel = await t.db
        .insertInto('channel')
        .values({ account_id: accountId, site_id: site.id, template_id: template.id, name: 'Legacy', ...stored })
        .returning('id')
        .executeTakeFirstOrThrow()
      const destination = { kind: 'feed', name: null, active: true, url: null, token: newFeedToken() } as const
      await t.db
        .insertInto('channel_destination')
        .values({ account_id: accountId, channel_id: channel.id, ...destination })
        .execute()
      return channel.id
    },
  }
  return given
}

/** A site seeded for imports and runs, with the requests tests make of it (platform and stream interface). */
export interface ImportFixture extends SiteScope {
  c: Client
  account: TestAccount
  site: Site
  platform(method: Method, path: string, payload?: object): Promise<Response>
  /** A stream of the account (seeded, not requested); returns its id. */
  createStream(type?: 'chunked' | 'referenced'): Promise<string>
  /** A data source of the site on the stream (seeded); returns its id. */
  attach(streamId: string, body?: DataSourceInput): Promise<number>
  upload(streamId: string, rows: object[] | string, headers?: Record<string, string>): Promise<Response>
  deleteProducts(streamId: string, ids: string[] | 'all'): Promise<Response>
  /** POST /process, then polls the status until the run ended; returns the pid and final status. */
  run(action?: string, body?: Record<string, unknown>): Promise<{ pid: string; status: string; message: string }>
  process(body: Record<string, unknown>): Promise<Response>
  waitFor(pid: string, statuses?: string[]): Promise<{ status: string; message: string }>
  stage(): Promise<{ columns: string[]; rows: Record<string, string>[] }>
  errors(pid?: string): Promise<{ error: string; type: string; classification: string; message: string; data: string; pid: string }[]>
}

/** A new site (of a new account unless `existing` is given) ready for imports. */
export async function importFixture(t: TestContext, siteInput: SiteInput = {}, existing?: Client): Promise<ImportFixture> {
  const given = factories(t)
  const c = existing ?? (await client(t))
  const site = await given.site({ account: c.account, ...siteInput })
  const platform = (method: Method, path: string, payload?: object) => c.send(method, path, payload)
  const bearer = { ...c.account.bearer, accept: JSON_API }
  const fixture: ImportFixture = {
    c,
    account: c.account,
    site,
    platform,
    createStream: async (type = 'chunked') => (await given.stream({ account: c.account, name: uniqueName('import'), type })).id,
    attach: async (streamId, body = {}) => Number((await given.dataSource({ account: c.account, site, stream: { id: streamId }, ...body })).id),
    upload: (streamId, rows, headers = NDJSON) =>
      t.request({
        method: 'POST',
        url: `/streams/${streamId}/products`,
        headers: { ...bearer, ...headers },
        payload: typeof rows === 'string' ? rows : rows.map((row) => JSON.stringify(row)).join('\n'),
      }),
    deleteProducts: (streamId, ids) =>
      t.request({
        method: 'DELETE',
        url: ids === 'all' ? `/streams/${streamId}/products?all=true` : `/streams/${streamId}/products`,
        headers: { ...bearer, ...(ids === 'all' ? {} : NDJSON) },
        ...(ids === 'all' ? {} : { payload: ids.map((id) => JSON.stringify({ id })).join('\n') }),
      }),
    process: (body) => platform('POST', `/process/${site.id}`, body),
    waitFor: (pid, statuses = ['success', 'failed']) =>
      eventually(
        async () => {
          const response = await platform('GET', `/sites/${site.id}/status/${pid}`)
          expect(response.statusCode, response.body).toBe(200)
          const body = response.json<{ status: string; message: string }>()
          return statuses.includes(body.status) ? body : undefined
        },
        `run ${pid} to reach ${statuses.join('/')}`,
      ),
    run: async (action = 'import', body = {}) => {
      const response = await fixture.process({ action, ...body })
      expect(response.statusCode, response.body).toBe(200)
      const pid = response.json<{ process_id: string }>().process_id
      return { pid, ...(await fixture.waitFor(pid)) }
    },
    stage: async () => {
      const stage = await t.db.selectFrom('site_stage').selectAll().where('site_id', '=', site.id).where('stage', '=', 'import').executeTakeFirst()
      const rows = await t.db
        .selectFrom('stage_product')
        .select('data')
        .where('site_id', '=', site.id)
        .where('stage', '=', 'import')
        .orderBy('product_id')
        .execute()
      // The import stage always keeps its rows' data (only channel stage rows refer to it).
      return { columns: stage?.columns ?? [], rows: rows.map((row) => row.data ?? {}) }
    },
    errors: async (pid) => {
      const response = await platform('GET', `/sites/${site.id}/errors${pid ? `?pid=${pid}` : ''}`)
      expect(response.statusCode, response.body).toBe(200)
      return response.json<{ Errors: { error: string; type: string; classification: string; message: string; data: string; pid: string }[] }>().Errors
    },
  }
  return fixture
}

/** One account with a site (reference `erp:<title>`) and a stream of its own, for the data-source tests. */
export interface SourcesFixture extends SiteScope {
  c: Client
  account: TestAccount
  site: Site
  streamId: string
  /** A request below /platform/v2 with the chosen credential. */
  send(method: Method, path: string, payload?: object, credential?: Credential): Promise<Response>
}

export async function sourcesFixture(t: TestContext, title = 'Shop', accountName?: string): Promise<SourcesFixture> {
  const given = factories(t)
  const c = platformClient(t, await given.account(accountName))
  const project = await given.project({ account: c.account, name: `${title} project` })
  const site = await given.site({ account: c.account, project, title, reference: `erp:${title.toLowerCase()}` })
  const stream = await given.stream({ account: c.account })
  return { c, account: c.account, site, streamId: stream.id, send: c.send }
}
