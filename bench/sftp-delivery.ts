// npm run bench:sftp — see README "Benchmarks". A feed of BENCH_MB (500) MB delivered to a real
// OpenSSH sftp server on loopback by the platform's SFTP delivery (host key check, upload under a
// temporary name, rename), against OpenSSH's own `sftp` client putting the same file, interleaved
// in the same run. Needs root (the test servers' user), like the tests.
import { execFile } from 'node:child_process'
import { createReadStream, createWriteStream } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { sendBySftp } from '../src/feeds/sftp-push.js'
import { startSftpServer } from '../test/helpers/sftp-server.js'
import { machineLine, median, writeResult } from './support.js'

const MB = Number(process.env.BENCH_MB ?? 500)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const run = promisify(execFile)

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'catalog-sftp-bench-'))
const file = path.join(dir, 'feed.csv')
await writeFeed(file, MB * 1024 * 1024)
const size = (await fs.stat(file)).size
const server = await startSftpServer()
const keyFile = path.join(dir, 'id')
await fs.writeFile(keyFile, server.privateKey, { mode: 0o600 })

/** OpenSSH's client, with the server's key pinned as a known host. */
async function openSsh(name: string): Promise<number> {
  const batch = path.join(dir, 'batch')
  await fs.writeFile(batch, `put ${file} upload/${name}\n`)
  const knownHosts = path.join(dir, 'known_hosts')
  const started = performance.now()
  await run('sftp', [
    '-q',
    '-b',
    batch,
    '-i',
    keyFile,
    '-P',
    String(server.port),
    '-o',
    'BatchMode=yes',
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    `UserKnownHostsFile=${knownHosts}`,
    `${server.user}@${server.host}`,
  ])
  return (performance.now() - started) / 1000
}

/** The platform's delivery: the same connection, check, temporary name and rename a push makes. */
async function platform(name: string): Promise<number> {
  const settings = { host: server.host, port: server.port, user: server.user, directory: 'upload', host_key_sha256: server.hostKeySha256, temp_rename: true }
  // In the pieces the default feed storage hands a push (postgres-feed-reader.ts: gunzip chunks of 256 KiB).
  const stream = () => createReadStream(file, { highWaterMark: 256 * 1024 })
  const storage = { open: async () => ({ size, stream, close: async () => {} }) }
  const started = performance.now()
  const result = await sendBySftp(
    { settings, credentials: { private_key: server.privateKey }, address: server.host },
    { storage, key: 'feed', filename: name, contentType: 'text/csv' },
    { timeoutMs: 600_000 },
  )
  if (!result.ok) throw new Error(`delivery failed: ${result.error}`)
  return (performance.now() - started) / 1000
}

const ours: number[] = []
const theirs: number[] = []
try {
  for (let i = 0; i < RUNS; i++) {
    theirs.push(await openSsh(`openssh-${i}.csv`))
    ours.push(await platform(`platform-${i}.csv`))
    console.log(`run ${i + 1}: OpenSSH sftp ${theirs.at(-1)?.toFixed(2)} s, platform ${ours.at(-1)?.toFixed(2)} s`)
    await fs.rm(path.join(server.root, 'upload'), { recursive: true, force: true }).catch(() => {})
    await fs.mkdir(path.join(server.root, 'upload'), { recursive: true })
    await run('chown', [`${server.user}:`, path.join(server.root, 'upload')]).catch(() => {})
  }
} finally {
  await server.stop()
  await fs.rm(dir, { recursive: true, force: true })
}

const mine = median(ours)
const base = median(theirs)
const lines = [
  '# SFTP delivery benchmark',
  '',
  `${new Date().toISOString().slice(0, 10)} · ${machineLine()} · median of ${RUNS} interleaved runs`,
  '',
  `A ${(size / 1e6).toFixed(0)} MB feed to OpenSSH's sshd (internal-sftp) on loopback, key login.`,
  '',
  '| what | seconds | MB/s | ratio to OpenSSH |',
  '|---|---:|---:|---:|',
  `| OpenSSH's \`sftp\` client, \`put\` | ${base.toFixed(2)} | ${(size / 1e6 / base).toFixed(0)} | 1.00 |`,
  `| the platform's delivery (host key check, temporary name, rename) | ${mine.toFixed(2)} | ${(size / 1e6 / mine).toFixed(0)} | ${(mine / base).toFixed(2)} |`,
  '',
  `Target: within 2× OpenSSH's time (ratio ≤ 2.00).`,
  '',
]
console.log(`\n${lines.join('\n')}`)
await writeResult('sftp-delivery.md', lines.join('\n'))

async function writeFeed(target: string, bytes: number): Promise<void> {
  const out = createWriteStream(target)
  const line = (i: number) => `SKU${i},Product ${i} with a title of some length,${(i % 997) + 0.99} EUR,in stock,https://shop.example/p/${i}\n`
  let written = 0
  for (let i = 0; written < bytes; i++) {
    const text = line(i)
    written += Buffer.byteLength(text)
    if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()))
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())))
}
