import fs from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { sftpLogin, startSftpServer, type SftpServer } from '../helpers/sftp-server.js'

// Sites that fetch their catalog from a file on an SFTP server (issue 34), against OpenSSH's sshd
// (internal-sftp) on a loopback port: the host key checked, the login with a password or a key with
// its passphrase, an unchanged file (same size and time) not read again. All through HTTP.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0', ALLOW_PRIVATE_DESTINATIONS: 'true' })

let sftp: SftpServer
beforeAll(async () => {
  sftp = await startSftpServer()
}, 60_000)
afterAll(async () => {
  await t.app.close()
  await sftp?.stop()
})

interface SourceJson {
  id: number
  last_fetch: { outcome: string; products: number | null; error: string | null } | null
}

async function putFile(name: string, body: string): Promise<void> {
  await fs.writeFile(path.join(sftp.root, 'upload', name), body)
}

function sftpSource(name: string, extra: Record<string, unknown> = {}) {
  return { ...sftpLogin(sftp), path: `upload/${name}`, ...extra }
}

async function create(f: ImportFixture, body: Record<string, unknown>): Promise<SourceJson> {
  const response = await f.c.post(`/sites/${f.site.id}/sources`, body)
  expect(response.statusCode, response.body).toBe(201)
  for (const secret of [sftp.password, sftp.passphraseKey.passphrase, 'PRIVATE KEY']) expect(response.body).not.toContain(secret)
  return response.json<{ Sources: SourceJson[] }>().Sources[0]!
}

async function lastFetch(f: ImportFixture, id: number) {
  const response = await f.c.get(`/sites/${f.site.id}/sources/${id}`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ Sources: SourceJson[] }>().Sources[0]!.last_fetch
}

async function importRun(f: ImportFixture) {
  const run = await f.run('import')
  expect(run.status, run.message).toBe('success')
  return run
}

describe('SFTP sources', () => {
  it('imports a file over SFTP, reads it again only once its size or time changed, and logs in with a key and passphrase too', async () => {
    const f = await importFixture(t)
    await putFile('shop.tsv', 'id\ttitle\nS1\tSofa\nS2\tTable\n')
    const source = await create(f, sftpSource('shop.tsv'))
    await importRun(f)
    expect((await f.stage()).rows).toEqual([
      { id: 'S1', title: 'Sofa' },
      { id: 'S2', title: 'Table' },
    ])
    expect(await lastFetch(f, source.id)).toMatchObject({ outcome: 'imported', products: 2 })
    await importRun(f)
    expect(await lastFetch(f, source.id)).toMatchObject({ outcome: 'unchanged' })
    await putFile('shop.tsv', 'id\ttitle\nS2\tTable, oak\n')
    // The modification time has a resolution of seconds: set it forward so the change is seen at once.
    const later = new Date(Date.now() + 5000)
    await fs.utimes(path.join(sftp.root, 'upload', 'shop.tsv'), later, later)
    await importRun(f)
    expect((await f.stage()).rows).toEqual([{ id: 'S2', title: 'Table, oak' }])

    const keyed = await importFixture(t)
    await putFile('keyed.ndjson', '{"id":"K1","title":"Key"}\n')
    const { password: _password, ...withoutPassword } = sftpSource('keyed.ndjson')
    await create(keyed, { ...withoutPassword, private_key: sftp.passphraseKey.privateKey, passphrase: sftp.passphraseKey.passphrase })
    await importRun(keyed)
    expect((await keyed.stage()).rows).toEqual([{ id: 'K1', title: 'Key' }])
  })

  it("reads with any of the server's host keys pinned, as ssh-keyscan lists them: ECDSA and RSA as well as Ed25519", async () => {
    await putFile('pinned.csv', 'id,title\nP1,Pinned\n')
    for (const pinned of [sftp.otherHostKeysSha256.ecdsa, sftp.otherHostKeysSha256.rsa]) {
      const f = await importFixture(t)
      const source = await create(f, sftpSource('pinned.csv', { host_key_sha256: pinned }))
      await importRun(f)
      expect(await lastFetch(f, source.id)).toMatchObject({ outcome: 'imported', products: 1, error: null })
    }
  })

  it('fails a file written to while it is read, keeping the data, instead of importing a part of it', async () => {
    const f = await importFixture(t)
    const file = path.join(sftp.root, 'upload', 'growing.csv')
    await putFile('growing.csv', 'id,title\nG1,First\n')
    const source = await create(f, sftpSource('growing.csv'))
    await importRun(f)
    // An export on the server rewrites the file while the import reads it: it grows until the run ends.
    await putFile('growing.csv', `id,title\n${Array.from({ length: 20_000 }, (_, i) => `G${i},Row ${i}\n`).join('')}`)
    let writing = true
    const writer = (async () => {
      for (let i = 20_000; writing; i++) await fs.appendFile(file, `G${i},Row ${i}\n`)
    })()
    const run = await importRun(f).finally(() => {
      writing = false
    })
    await writer
    expect((await lastFetch(f, source.id))?.error).toMatch(/^upload\/growing\.csv changed on the server while it was read \(\d+ bytes, then \d+\)/)
    expect((await f.errors(run.pid)).find((e) => e.error === '1007')?.message).toMatch(/changed on the server while it was read/)
    expect((await f.stage()).rows).toEqual([{ id: 'G1', title: 'First' }])
  })

  it('fails without reading a byte when the host key differs, when the login is refused or the file is missing, and keeps the data', async () => {
    const f = await importFixture(t)
    await putFile('kept.csv', 'id,title\nK1,Kept\n')
    const source = await create(f, sftpSource('kept.csv'))
    await importRun(f)
    const wrongKey = `SHA256:${Buffer.alloc(32, 7).toString('base64').replace(/=+$/, '')}`
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ host_key_sha256: wrongKey }, new RegExp(`host key is ${sftp.hostKeySha256.replace(/[+/]/g, '\\$&')}, not the .*nothing was read`)],
      [{ password: 'wrong' }, /refused the login .*nothing was read/],
      [{ path: 'upload/missing.csv' }, /has no file upload\/missing\.csv/],
    ]
    for (const [change, reason] of cases) {
      const saved = await f.c.send('PUT', `/sites/${f.site.id}/sources/${source.id}`, { ...sftpSource('kept.csv'), ...change })
      expect(saved.statusCode, saved.body).toBe(200)
      const run = await importRun(f)
      expect((await lastFetch(f, source.id))?.error).toMatch(reason)
      expect((await f.errors(run.pid)).find((e) => e.error === '1007')?.message).toMatch(reason)
      expect((await f.stage()).rows).toEqual([{ id: 'K1', title: 'Kept' }])
    }
  })
})
