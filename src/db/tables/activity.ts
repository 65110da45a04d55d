import type { ColumnType, Generated } from 'kysely'

// The activity log and idempotency keys (src/activity/, src/idempotency/).

export interface ActivityTable {
  id: Generated<string>
  account_id: string
  occurred_at: Date
  actor_type: string
  actor_id: string
  actor_label: string
  action: string
  target_type: string
  target_id: string
  site_id: string | null
  changes: ColumnType<Record<string, unknown>, string, never>
  request_id: string | null
  request_address: string | null
  request_user_agent: string | null
  idempotency_key: string | null
}

export interface IdempotencyKeyTable {
  account_id: string
  key: string
  fingerprint: string
  claim: string
  state: 'running' | 'done'
  created_at: Date
  lease_until: Date
  status: number | null
  headers: ColumnType<Record<string, string> | null, string | null, string | null>
  body: string | null
}
