import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CredentialBox, CredentialsNotConfiguredError, credentialBoxOf } from '../../src/auth/credential-box.js'
import { resealCredentials } from '../../src/channels/channel-destinations.js'
import { importFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'

// Credentials of file servers are sealed with the operator's key (AES-256-GCM): what the database
// holds opens only with the key; keys rotate with CREDENTIALS_KEYS_PREVIOUS and `reseal-credentials`.

const t = useTestApp({ ...HIGH_LIMITS, ALLOW_PRIVATE_DESTINATIONS: 'true' })
const newKey = () => randomBytes(32).toString('base64')

describe('the credential box', () => {
  it('seals so that only the key opens, and refuses an altered value', () => {
    const box = new CredentialBox({ current: newKey() })
    const sealed = box.seal('{"password":"s3cret é"}')
    expect(sealed).not.toContain('s3cret')
    expect(box.open(sealed)).toBe('{"password":"s3cret é"}')
    expect(box.seal('same')).not.toBe(box.seal('same'))
    const parts = sealed.split('.')
    parts[4] = Buffer.from('tampered').toString('base64url')
    expect(() => box.open(parts.join('.'))).toThrow()
    expect(() => new CredentialBox({ current: newKey() }).open(sealed)).toThrow(/not configured/)
    expect(() => new CredentialBox({ current: 'too short' })).toThrow(/CREDENTIALS_KEY must be 32 bytes/)
  })

  it('opens what an old key sealed while it is listed as previous, and reseals it with the new one', async () => {
    const oldKey = newKey()
    const before = new CredentialBox({ current: oldKey })
    const f = await importFixture(t)
    const response = await f.c.post(`/sites/${f.site.id}/channels`, {
      name: 'Files',
      export_name: 'generic',
      destinations: [{ type: 'ftps', host: '127.0.0.1', user: 'shop', password: 'pw-to-keep', insecure: true }],
    })
    expect(response.statusCode, response.body).toBe(201)
    // The row as an older key sealed it.
    await t.db
      .updateTable('channel_destination')
      .set({ sealed_credentials: before.seal('{"password":"pw-to-keep"}') })
      .where('kind', '=', 'ftps')
      .execute()
    const rotated = new CredentialBox({ current: newKey(), previous: [oldKey] })
    expect(await resealCredentials(t.db, rotated)).toBeGreaterThanOrEqual(1)
    const row = await t.db.selectFrom('channel_destination').select('sealed_credentials').where('kind', '=', 'ftps').executeTakeFirstOrThrow()
    expect(rotated.isCurrent(row.sealed_credentials!)).toBe(true)
    expect(new CredentialBox({ current: newKey(), previous: [] }).isCurrent(row.sealed_credentials!)).toBe(false)
    expect(JSON.parse(rotated.open(row.sealed_credentials!))).toEqual({ password: 'pw-to-keep' })
    expect(await resealCredentials(t.db, rotated)).toBe(0)
  })

  it('makes a key file of its own on the embedded database, and has none on a shared database without CREDENTIALS_KEY', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'credential-box-'))
    try {
      const config = { CREDENTIALS_KEY: undefined, CREDENTIALS_KEYS_PREVIOUS: '', DATABASE_URL: undefined, DATA_DIR: dir }
      const sealed = credentialBoxOf(config).seal('x')
      expect((await fs.stat(path.join(dir, 'credentials.key'))).mode & 0o777).toBe(0o600)
      // Another process on the same data directory (the CLI) uses the same key.
      expect(credentialBoxOf(config).open(sealed)).toBe('x')
      const shared = credentialBoxOf({ ...config, DATABASE_URL: 'postgres://elsewhere/db' })
      expect(() => shared.seal('x')).toThrow(CredentialsNotConfiguredError)
    } finally {
      await fs.rm(dir, { recursive: true, force: true })
    }
  })
})
