import { crc32, deflateSync } from 'node:zlib'

// The console's icon: a 16×16 PNG drawn here (a blue square with a white bar: a feed), so that no
// binary file sits in the repository and no request leaves the server. Served as /favicon.ico too,
// which every browser asks for whatever the page says (a PNG there is read by every current one).

const SIZE = 16
const BLUE = [11, 92, 173]
const WHITE = [255, 255, 255]

export const FAVICON_PNG = png(SIZE, (x, y) => (y >= 6 && y <= 9 && x >= 3 && x <= 12 ? WHITE : BLUE))

function png(size: number, pixel: (x: number, y: number) => number[]): Buffer {
  const rows: number[] = []
  for (let y = 0; y < size; y++) {
    rows.push(0) // no filter
    for (let x = 0; x < size; x++) rows.push(...pixel(x, y))
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(size, 0)
  header.writeUInt32BE(size, 4)
  header.set([8, 2, 0, 0, 0], 8) // 8 bits per channel, RGB, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.from(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}
