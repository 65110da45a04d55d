import type { Command } from 'commander'
import { InvalidArgumentError } from 'commander'
import { createAccount, createToken, listAccounts, listTokens, revokeToken, rotateCredential } from '../accounts/accounts.js'
import { migrateToLatest } from '../db/migrate.js'
import { runCleanup } from '../jobs/cleanup.js'
import { configuredFeedStorage } from '../feeds/configured-storage.js'
import { purgeDeletedStreams, setStreamStatus, STREAM_STATUSES } from '../streams/streams.js'
import { isId } from '../db/ids.js'
import { withDatabase } from './with-database.js'
import { loadConfig } from '../config.js'
import { credentialBoxOf } from '../auth/credential-box.js'
import { resealCredentials } from '../channels/channel-destinations.js'

const print = (line: string): void => {
  process.stdout.write(`${line}\n`)
}
const printJson = (value: unknown): void => print(JSON.stringify(value))

function accountId(value: string): string {
  if (!isId(value)) throw new InvalidArgumentError('must be a numeric account id')
  return value
}

function wholeMinutes(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('must be a whole number of minutes')
  return Number(value)
}

// Commander lists the commands in the order they are added: `--help` shows them in this order.
export function operatorCommands(program: Command): void {
  migrateCommand(program)
  accountCommands(program)
  tokenCommands(program)
  streamCommands(program)
  cleanupCommand(program)
  credentialCommands(program)
  resealCommand(program)
}

function migrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(async () => {
      const applied = await withDatabase((db) => migrateToLatest(db))
      print(applied.length > 0 ? `applied: ${applied.join(', ')}` : 'database is up to date')
    })
}

function accountCommands(program: Command): void {
  const accounts = program.command('accounts').description('manage accounts')
  accounts
    .command('create')
    .requiredOption('--name <name>', 'account name')
    .option('--json', 'print one JSON object')
    .description('create an account with its platform credential and a personal access token')
    .action(async (options: { name: string; json?: boolean }) => {
      const created = await withDatabase((db) => createAccount(db, options.name))
      const { clientId, clientSecret, xAuthToken } = created.credential
      if (options.json) {
        printJson({ account_id: created.accountId, client_id: clientId, client_secret: clientSecret, x_auth_token: xAuthToken, token: created.token.token })
        return
      }
      print(`account_id:    ${created.accountId}`)
      print(`client_id:     ${clientId}`)
      print(`client_secret: ${clientSecret}`)
      print(`X-Auth-Token:  ${xAuthToken}`)
      print(`token:         ${created.token.token}   (Authorization: Bearer ...)`)
      print('The secret and the token are shown only now; they are stored as hashes.')
    })
  accounts
    .command('list')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const rows = await withDatabase((db) => listAccounts(db))
      if (options.json) return printJson(rows.map((r) => ({ account_id: r.id, name: r.name, client_id: r.client_id, created_at: r.created_at.toISOString() })))
      for (const r of rows) print(`${r.id}\t${r.name}\t${r.client_id ?? '-'}\t${r.created_at.toISOString()}`)
    })
}

function tokenCommands(program: Command): void {
  const tokens = program.command('tokens').description('manage personal access tokens (bearer)')
  tokens
    .command('create')
    .requiredOption('--account <id>', 'account id', accountId)
    .option('--name <name>', 'token name', 'token')
    .option('--json', 'print one JSON object')
    .action(async (options: { account: string; name: string; json?: boolean }) => {
      const token = await withDatabase((db) => createToken(db, options.account, options.name))
      if (options.json) return printJson({ token_id: token.id, name: token.name, token: token.token })
      print(`token_id: ${token.id}`)
      print(`token:    ${token.token}   (shown only now)`)
    })
  tokens
    .command('list')
    .requiredOption('--account <id>', 'account id', accountId)
    .option('--json', 'print JSON')
    .action(async (options: { account: string; json?: boolean }) => {
      const rows = await withDatabase((db) => listTokens(db, options.account))
      const view = rows.map((r) => ({ token_id: r.id, name: r.name, created_at: r.created_at.toISOString(), revoked_at: r.revoked_at?.toISOString() ?? null }))
      if (options.json) return printJson(view)
      for (const r of view) print(`${r.token_id}\t${r.name}\t${r.created_at}\t${r.revoked_at ? `revoked ${r.revoked_at}` : 'active'}`)
    })
  tokens.command('revoke <tokenId>').action(async (tokenId: string) => {
    await withDatabase((db) => revokeToken(db, tokenId))
    print(`token ${tokenId} revoked`)
  })
}

function streamCommands(program: Command): void {
  const streams = program.command('streams').description('operate streams')
  streams
    .command('set-status <streamId> <status>')
    .description(`set a stream's status: ${STREAM_STATUSES.join(', ')}`)
    .action(async (streamId: string, status: string) => {
      const stream = await withDatabase((db) => setStreamStatus(db, streamId, status, new Date()))
      print(`stream ${stream.id} (${stream.name}) is now ${stream.status}`)
    })
  streams
    .command('purge')
    .description('remove streams deleted more than 7 days ago, with their data (the server also does this hourly)')
    .action(async () => {
      const purged = await withDatabase((db) => purgeDeletedStreams(db, new Date()))
      print(`purged ${purged} stream(s)`)
    })
}

function cleanupCommand(program: Command): void {
  program
    .command('cleanup')
    .description('what the server does hourly: purge streams deleted 7 days ago, release the rows of applied batches, remove the stage rows of deleted sites')
    .option('--grace-minutes <n>', 'release batch rows applied at least this long ago', wholeMinutes, 10)
    .action(async (options: { graceMinutes: number }) => {
      const config = loadConfig()
      const report = await withDatabase((db) =>
        runCleanup(db, {
          now: new Date(),
          feedStorage: configuredFeedStorage(config, db),
          graceMinutes: options.graceMinutes,
          webhookWindowSeconds: Math.round(config.WEBHOOK_RETRY_HOURS * 3600),
          activityRetentionDays: config.ACTIVITY_RETENTION_DAYS,
          idempotencyTtlHours: config.IDEMPOTENCY_TTL_HOURS,
        }),
      )
      print(
        `purged ${report.streams} stream(s), released the rows of ${report.batches} batch(es), removed the stages of ${report.sites} deleted site(s), ` +
          `deleted ${report.feeds} removed feed file(s), ended or deleted ${report.webhookDeliveries} webhook deliveries, ` +
          `deleted ${report.consoleSessions} expired console session(s), ${report.activity} activity entries past ACTIVITY_RETENTION_DAYS, ` +
          `${report.idempotencyKeys} expired idempotency key(s), and wrote ${report.recordedFiles} full feed file(s) an export recorded and nobody wrote`,
      )
    })
}

function resealCommand(program: Command): void {
  program
    .command('reseal-credentials')
    .description("seal the file servers' stored credentials with CREDENTIALS_KEY (after a rotation: the old key in CREDENTIALS_KEYS_PREVIOUS)")
    .action(async () => {
      const resealed = await withDatabase((db) => resealCredentials(db, credentialBoxOf(loadConfig())))
      print(`resealed ${resealed} credential(s) with the current key`)
    })
}

function credentialCommands(program: Command): void {
  program
    .command('credentials')
    .description('manage the platform credential (X-Auth-Token)')
    .command('rotate')
    .requiredOption('--account <id>', 'account id', accountId)
    .option('--json', 'print one JSON object')
    .action(async (options: { account: string; json?: boolean }) => {
      const credential = await withDatabase((db) => rotateCredential(db, options.account))
      if (options.json) return printJson({ client_id: credential.clientId, client_secret: credential.clientSecret, x_auth_token: credential.xAuthToken })
      print(`client_id:     ${credential.clientId}`)
      print(`client_secret: ${credential.clientSecret}`)
      print(`X-Auth-Token:  ${credential.xAuthToken}`)
      print('The previous credential no longer works.')
    })
}
