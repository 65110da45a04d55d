import { AsyncLocalStorage } from 'node:async_hooks'
import type { Tx } from '../db/transaction.js'

/** Who makes a change (docs/interface.md, "Activity"). */
export type ActorType = 'platform_credential' | 'token' | 'console' | 'operator' | 'cli' | 'system'

export interface Actor {
  type: ActorType
  /** Stable across spellings of the credential: a client id, a token's id, `operator`, a user name. */
  id: string
  /** What a person recognises: a token's name, a client id. Never a secret. */
  label: string
}

/** The request a change came with; null for work that no request started (the scheduler, the CLI). */
export interface RequestFacts {
  id: string
  address: string | null
  userAgent: string | null
  idempotencyKey: string | null
}

/**
 * A request's idempotency key while it runs (src/idempotency/request-claim.ts). The change's own
 * transaction settles it, so that a change never commits without its stored answer, nor the reverse.
 */
export interface RequestClaim {
  /** Claims the key once the request's body is known; throws when the key answers instead (replay, 409, 422). */
  begin(bodyDigest: string): Promise<void>
  /** Stores the answer that `result` makes, in the change's transaction. */
  settle(tx: Tx, result: unknown): Promise<void>
}

/** What every change made under it records: the actor, the request, and the request's key. */
export interface RequestScope {
  actor: Actor
  request: RequestFacts | null
  claim?: RequestClaim
}

/** The platform's own work: runs, schedules, safety stops. */
export const SYSTEM_SCOPE: RequestScope = { actor: { type: 'system', id: 'system', label: 'the platform' }, request: null }

// Ambient like a logger's context: the interfaces know the actor, the domain functions record the
// change, and the dozens of calls between them need not carry it.
const storage = new AsyncLocalStorage<RequestScope>()

/** Runs `work` with `scope` as the actor and request of every change it records. */
export function withRequestScope<T>(scope: RequestScope, work: () => T): T {
  return storage.run(scope, work)
}

/** The scope of the running work; the platform itself when no interface set one. */
export function currentRequestScope(): RequestScope {
  return storage.getStore() ?? SYSTEM_SCOPE
}

/** Whether the running request carries an idempotency key (its body is then hashed as it arrives). */
export function requestHasClaim(): boolean {
  return storage.getStore()?.claim !== undefined
}

/** Claims the request's idempotency key, where the request carries one (after its body was received). */
export async function beginRequestClaim(bodyDigest: string): Promise<void> {
  await storage.getStore()?.claim?.begin(bodyDigest)
}

/** Stores the request's answer with its change, in `tx`, where the request carries a key. */
export async function settleRequestClaim(tx: Tx, result: unknown): Promise<void> {
  await storage.getStore()?.claim?.settle(tx, result)
}
