import { createHash } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { currentRequestScope, withRequestScope, type RequestClaim } from '../activity/request-scope.js'
import type { Db, DbHandle } from '../db/database.js'
import type { Tx } from '../db/transaction.js'
import { BadRequestError, ConflictError, UnprocessableError } from '../errors.js'
import { claimKey, releaseKey, settleKey, type StoredAnswer } from '../idempotency/idempotency-keys.js'
import { bodyDigestOf } from './request-digest.js'

/** The answer a route gives for its domain function's result. */
export interface RenderedAnswer {
  status: number
  body: unknown
  /** Headers that belong to the answer (a new resource's Location): replays carry them too. */
  headers?: Record<string, string>
}

export interface AnsweredOnce<T> {
  /** Makes the change; the change's transaction calls settleRequestClaim with the result. */
  run: () => Promise<T>
  /** `db`: the handle to read with; inside the change's transaction when the answer is stored with it. */
  render: (result: T, db: DbHandle) => RenderedAnswer | Promise<RenderedAnswer>
  /** A streamed upload claims the key itself once its body arrived (beginRequestClaim); any other route before it runs. */
  claimAfterBody?: boolean
}

export interface IdempotencyDeps {
  db: Db
  clock: () => Date
  config: { IDEMPOTENCY_TTL_HOURS: number; STREAM_REQUEST_TIMEOUT_MS: number }
}

const KEY_HEADER = 'idempotency-key'

/** The header as the API reference shows it on every route that takes it; checked by idempotencyKeyOf, not by the schema. */
export const IdempotencyHeaders = Type.Object({
  [KEY_HEADER]: Type.Optional(
    Type.String({
      description:
        'Makes the request safe to retry: 1 to 255 visible ASCII characters (a UUID, say). A repeat with the same key, method, ' +
        'path, credential and body within IDEMPOTENCY_TTL_HOURS gets the first answer again, with `Idempotent-Replayed: true`, ' +
        'and changes nothing; while the first still runs, a 409 with Retry-After; with another request, a 422.',
    }),
  ),
})
// Visible ASCII (RFC 9110 tokens and more: Stripe's keys, UUIDs, base64): no blanks, no controls.
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/

/** The request's Idempotency-Key; a malformed one is a 400 naming the rule. */
export function idempotencyKeyOf(request: FastifyRequest): string | null {
  const value = request.headers[KEY_HEADER]
  if (value === undefined) return null
  if (Array.isArray(value)) throw new BadRequestError('Idempotency-Key: send the header once')
  if (!KEY_PATTERN.test(value)) {
    throw new BadRequestError('Idempotency-Key: must be 1 to 255 visible ASCII characters (no spaces), such as a UUID')
  }
  return value
}

/**
 * Answers a request that may carry an Idempotency-Key (docs/interface.md, "Idempotency keys"):
 * without one, it runs and renders; with one, its first answer is stored in the transaction of its
 * change and every repeat within IDEMPOTENCY_TTL_HOURS gets that answer again, changing nothing.
 */
export async function answerOnce<T>(request: FastifyRequest, reply: FastifyReply, deps: IdempotencyDeps, route: AnsweredOnce<T>): Promise<FastifyReply> {
  const key = idempotencyKeyOf(request)
  if (key === null || request.caller === null) return sendRendered(reply, await route.render(await route.run(), deps.db))
  const claim = new KeyedRequest(request, reply, deps, key, route.render as Render)
  try {
    const scope = currentRequestScope()
    // The entry of the change records the key: this route honours it.
    const keyed = scope.request && { ...scope.request, idempotencyKey: key }
    const result = await withRequestScope({ ...scope, request: keyed, claim }, async () => {
      if (!route.claimAfterBody) await claim.begin(bodyDigestOf(request))
      return route.run()
    })
    if (claim.stored) return sendStored(reply, claim.stored, false)
    // Refused without a change (an empty upload): nothing is kept, so that its retry runs again.
    await claim.release()
    return sendRendered(reply, await route.render(result, deps.db))
  } catch (error) {
    if (error instanceof Replay) return sendStored(reply, error.answer, true)
    await claim.release()
    throw error
  }
}

function sendRendered(reply: FastifyReply, { status, body, headers = {} }: RenderedAnswer): FastifyReply {
  for (const [name, value] of Object.entries(headers)) reply.header(name, value)
  return reply.code(status).send(body)
}

function sendStored(reply: FastifyReply, answer: StoredAnswer, replayed: boolean): FastifyReply {
  for (const [name, value] of Object.entries(answer.headers)) reply.header(name, value)
  if (replayed) reply.header('idempotent-replayed', 'true')
  return reply.code(answer.status).send(answer.body)
}

type Render = (result: unknown, db: DbHandle) => RenderedAnswer | Promise<RenderedAnswer>

/** Not a failure: the key answered already, and its stored answer goes out instead. */
class Replay extends Error {
  constructor(readonly answer: StoredAnswer) {
    super('replayed')
  }
}

class KeyedRequest implements RequestClaim {
  private claimId: string | null = null
  /** The answer stored with the change, once the change committed. */
  stored: StoredAnswer | null = null

  constructor(
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly deps: IdempotencyDeps,
    private readonly key: string,
    private readonly render: Render,
  ) {}

  private get accountId(): string {
    return this.request.caller!.accountId
  }

  async begin(bodyDigest: string): Promise<void> {
    if (this.claimId !== null) return
    const { request, deps } = this
    const fingerprint = createHash('sha256').update(`${request.method}\n${request.url}\n${request.caller!.credentialId}\n${bodyDigest}`).digest('hex')
    const outcome = await claimKey(deps.db, {
      accountId: this.accountId,
      key: this.key,
      fingerprint,
      now: deps.clock(),
      ttlMs: deps.config.IDEMPOTENCY_TTL_HOURS * 3600_000,
      // Past every request's own time limit: a claim this old belongs to a process that died.
      leaseMs: Math.max(60_000, 2 * deps.config.STREAM_REQUEST_TIMEOUT_MS),
    })
    if (outcome.kind === 'claimed') this.claimId = outcome.claim
    else if (outcome.kind === 'replay') throw new Replay(outcome.answer)
    else if (outcome.kind === 'running') throw new KeyInUseError(this.key)
    else
      throw new UnprocessableError(
        `Idempotency-Key "${this.key}" was used for a different request (another method, path, credential or body); use a new key for a new request`,
      )
  }

  async settle(tx: Tx, result: unknown): Promise<void> {
    if (this.claimId === null) throw new Error('settle before begin: the route claims its key first')
    const { status, body, headers = {} } = await this.render(result, tx.db)
    this.reply.code(status)
    if (!this.reply.hasHeader('content-type')) this.reply.type('application/json; charset=utf-8')
    const serialized = this.reply.serialize(body)
    const text = typeof serialized === 'string' ? serialized : Buffer.from(serialized as ArrayBuffer).toString('utf8')
    const answer: StoredAnswer = { status, headers: { ...headers, 'content-type': String(this.reply.getHeader('content-type')) }, body: text }
    const target = { accountId: this.accountId, key: this.key, claim: this.claimId }
    if (!(await settleKey(tx.db, target, answer))) throw new KeyInUseError(this.key)
    tx.onCommit(() => {
      this.stored = answer
    })
  }

  async release(): Promise<void> {
    if (this.claimId === null) return
    await releaseKey(this.deps.db, { accountId: this.accountId, key: this.key, claim: this.claimId })
    this.claimId = null
  }
}

/** Another request with the key is still running: its answer will be the key's. */
class KeyInUseError extends ConflictError {
  readonly retryAfterSeconds = 1

  constructor(key: string) {
    super(`A request with Idempotency-Key "${key}" is still running; retry after it has been answered to get its answer`)
  }
}
