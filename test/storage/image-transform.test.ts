// Storage's image transformations without a server: the query as storage-js
// writes it, each refusal in Supabase's words, each resize mode's size as
// imgproxy computes it (read back from the bytes), quality, the output format
// against Accept, the limits (bytes while streaming, pixels from the header),
// the cache key and the plans that offer transforms.
import { Readable } from 'node:stream'
import { crc32, deflateSync } from 'node:zlib'
import t from 'tap'
import sharp from 'sharp'
import { createClient } from '@supabase/supabase-js'
import { PLANS } from '../../lib/plans.ts'
import {
  acceptsWebp, DEFAULT_QUALITY, ImageTooLarge, MAX_DIMENSION, MAX_SOURCE_BYTES, NotAnImage, RENDER_LIMITS, renderImage,
  transformKey, TransformOptionsInvalid, transformOptionsFrom, transformsOffered, type TransformOptions,
} from '../../workers/storage/image-transform.ts'

const q = (query: string) => transformOptionsFrom(new URLSearchParams(query))
const options = (extra: Partial<TransformOptions> = {}): TransformOptions => ({ resize: 'cover', quality: DEFAULT_QUALITY, format: 'auto', ...extra })
async function* chunks(...buffers: Buffer[]): AsyncGenerator<Uint8Array> {
  for (const buffer of buffers) yield buffer
}
const render = (source: Buffer, opts: TransformOptions, accept?: string, contentType = 'application/octet-stream') =>
  renderImage(chunks(source), opts, accept, contentType)
const meta = (body: Buffer) => sharp(body).metadata()

/** A photo-like image: noise, so quality and size move together as they do for real pictures. */
async function noise(width: number, height: number, channels: 3 | 4 = 3): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * channels)
  let seed = 7
  for (let i = 0; i < raw.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    raw[i] = channels === 4 && i % 4 === 3 ? 255 : seed >> 23
  }
  return sharp(raw, { raw: { width, height, channels } }).png().toBuffer()
}

/** A PNG whose header claims width x height over a few bytes of pixels (libspng wants an IDAT to read the header): the limit is read from the header alone. */
function pngHeader(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
    const out = Buffer.alloc(8 + data.length + 4)
    out.writeUInt32BE(data.length, 0)
    body.copy(out, 4)
    out.writeUInt32BE(crc32(body), 8 + data.length)
    return out
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr.set([8, 2, 0, 0, 0], 8)
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.alloc(4))), chunk('IEND', Buffer.alloc(0))])
}

const refusal = (parameter: string, message: string) => ({
  name: 'TransformOptionsInvalid', code: `invalid_${parameter}`, parameter, message, status: 400, storageCode: 'InvalidRequest',
})

// First, before anything has loaded sharp through the module: what it finds is undone.
t.test('libvips is kept to one thread and no operation cache once a rendering has run', async (t) => {
  sharp.concurrency(3)
  sharp.cache({ memory: 50, files: 20, items: 100 })
  t.equal(sharp.concurrency(), 3)
  await render(await noise(8, 8), options())
  t.equal(sharp.concurrency(), 1)
  t.same(sharp.cache(), { memory: { current: 0, high: 0, max: 0 }, files: { current: 0, max: 0 }, items: { current: 0, max: 0 } })
})

t.test('options: the defaults, every parameter, and the query storage-js writes', async (t) => {
  t.same(q(''), { resize: 'cover', quality: 80, format: 'auto' })
  t.same(q('width=500&height=600&resize=contain&quality=50&format=origin'), { width: 500, height: 600, resize: 'contain', quality: 50, format: 'origin' })
  t.same(q('format=avif'), { resize: 'cover', quality: 80, format: 'avif' })
  t.same(q('format=webp&resize=fill&quality=20'), { resize: 'fill', quality: 20, format: 'webp' })
  t.same(q('quality=100&download=cat.png&token=abc'), { resize: 'cover', quality: 100, format: 'auto' }, 'other parameters are not read')

  const storage = createClient('http://127.0.0.1:1', 'anon-key').storage.from('bucket')
  const { data } = storage.getPublicUrl('folder/cat.png', { transform: { width: 100, height: 50, resize: 'contain', quality: 60, format: 'origin' } })
  const url = new URL(data.publicUrl)
  t.equal(url.pathname, '/storage/v1/render/image/public/bucket/folder/cat.png')
  t.same(transformOptionsFrom(url.searchParams), { width: 100, height: 50, resize: 'contain', quality: 60, format: 'origin' })
})

t.test('options: 0 leaves a side free and a side past the limit is clamped, as storage-api does', async (t) => {
  t.equal(MAX_DIMENSION, 2500)
  t.same(q('width=0&height=0'), { resize: 'cover', quality: 80, format: 'auto' })
  t.same(q('width=0&height=40'), { height: 40, resize: 'cover', quality: 80, format: 'auto' })
  t.same(q('width=3000'), { width: 2500, resize: 'cover', quality: 80, format: 'auto' })
  t.same(q('width=3840&height=99999999999999'), { width: 2500, height: 2500, resize: 'cover', quality: 80, format: 'auto' })
  t.same(q('width=1&height=2500'), { width: 1, height: 2500, resize: 'cover', quality: 80, format: 'auto' })
})

t.test('options: each bad value is refused with its code, in the words of the server schema', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['width=abc', 'width', 'querystring/width must be integer'],
    ['width=1.5', 'width', 'querystring/width must be integer'],
    ['width=', 'width', 'querystring/width must be integer'],
    ['width=-1', 'width', 'querystring/width must be >= 0'],
    ['width=1&width=2', 'width', 'querystring/width must be integer'],
    ['height=12px', 'height', 'querystring/height must be integer'],
    ['height=-20', 'height', 'querystring/height must be >= 0'],
    ['resize=foo', 'resize', 'querystring/resize must be equal to one of the allowed values'],
    ['resize=Cover', 'resize', 'querystring/resize must be equal to one of the allowed values'],
    ['resize=cover&resize=fill', 'resize', 'querystring/resize must be string'],
    ['quality=5', 'quality', 'querystring/quality must be >= 20'],
    ['quality=19', 'quality', 'querystring/quality must be >= 20'],
    ['quality=101', 'quality', 'querystring/quality must be <= 100'],
    ['quality=high', 'quality', 'querystring/quality must be integer'],
    ['format=png', 'format', 'querystring/format must be equal to one of the allowed values'],
    ['format=auto', 'format', 'querystring/format must be equal to one of the allowed values'],
  ]
  for (const [query, parameter, message] of cases) {
    t.throws(() => q(query), refusal(parameter, message), query)
    try {
      q(query)
    } catch (error) {
      t.ok(error instanceof TransformOptionsInvalid, `${query}: a TransformOptionsInvalid`)
    }
  }
})

t.test('resize modes: sizes as imgproxy makes them, read back from the output', async (t) => {
  const source = await noise(400, 200)
  const size = async (extra: Partial<TransformOptions>) => {
    const { width, height } = await meta((await render(source, options({ format: 'origin', ...extra }))).body)
    return [width, height]
  }
  t.same(await size({ width: 100, height: 100, resize: 'cover' }), [100, 100], 'cover fills the box and crops')
  t.same(await size({ width: 100, height: 100, resize: 'contain' }), [100, 50], 'contain fits inside the box, unpadded')
  t.same(await size({ width: 100, height: 100, resize: 'fill' }), [100, 100], 'fill stretches to the box')
  t.same(await size({ width: 100, height: 20, resize: 'fill' }), [100, 20])
  t.same(await size({ width: 100 }), [100, 50], 'one side keeps the aspect ratio')
  t.same(await size({ height: 50, resize: 'contain' }), [100, 50])
  t.same(await size({ width: 100, resize: 'fill' }), [100, 200], 'force with one side leaves the other as it was')
  t.same(await size({}), [400, 200], 'no side: no resize')

  t.same(await size({ width: 800, height: 800, resize: 'cover' }), [400, 200], 'never enlarged')
  t.same(await size({ width: 300, height: 300, resize: 'cover' }), [300, 200], 'cover not enlarged: cropped to the box where the image is larger')
  t.same(await size({ width: 800, height: 800, resize: 'contain' }), [400, 200])
  t.same(await size({ width: 800, height: 100, resize: 'fill' }), [400, 50], 'fill not enlarged keeps the stretch ratio')
  t.same(await size({ width: 2500 }), [400, 200])

  const turned = await sharp(await noise(400, 200)).jpeg().withMetadata({ orientation: 6 }).toBuffer()
  const upright = await meta((await render(turned, options({ width: 100, format: 'origin' }))).body)
  t.same([upright.width, upright.height, upright.orientation], [100, 200, undefined], 'EXIF orientation applied before sizing')
})

t.test('quality changes the encoded size; png ignores it as imgproxy does', async (t) => {
  const source = await noise(300, 300)
  const jpeg = await sharp(source).jpeg({ quality: 95 }).toBuffer()
  const bytes = async (input: Buffer, extra: Partial<TransformOptions>) => (await render(input, options(extra))).body.length
  const [jpeg20, jpeg80, jpeg100] = [await bytes(jpeg, { format: 'origin', quality: 20 }), await bytes(jpeg, { format: 'origin' }), await bytes(jpeg, { format: 'origin', quality: 100 })]
  t.ok(jpeg20 < jpeg80 && jpeg80 < jpeg100, `jpeg ${jpeg20} < ${jpeg80} < ${jpeg100}`)
  const [webp20, webp90] = [await bytes(source, { format: 'webp', quality: 20 }), await bytes(source, { format: 'webp', quality: 90 })]
  t.ok(webp20 < webp90, `webp ${webp20} < ${webp90}`)
  const [avif20, avif90] = [await bytes(source, { format: 'avif', quality: 20 }), await bytes(source, { format: 'avif', quality: 90 })]
  t.ok(avif20 < avif90, `avif ${avif20} < ${avif90}`)
  t.equal(await bytes(source, { format: 'origin', quality: 20 }), await bytes(source, { format: 'origin', quality: 100 }), 'png is lossless')
})

t.test('format: origin keeps the source, WebP is negotiated, AVIF only when asked for', async (t) => {
  const png = await noise(64, 48, 4)
  const jpeg = await sharp(await noise(64, 48)).jpeg().toBuffer()
  const BROWSER = 'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8'
  const cases: Array<[string, Buffer, Partial<TransformOptions>, string | undefined, string, string]> = [
    ['png, origin, a browser', png, { format: 'origin' }, BROWSER, 'png', 'image/png'],
    ['jpeg, origin, a browser', jpeg, { format: 'origin' }, BROWSER, 'jpeg', 'image/jpeg'],
    ['jpeg, no format, a browser', jpeg, {}, BROWSER, 'webp', 'image/webp'],
    ['png, no format, webp only', png, {}, 'image/webp', 'webp', 'image/webp'],
    ['png, no format, avif but not webp', png, {}, 'image/avif', 'png', 'image/png'],
    ['png, no format, any type', png, {}, '*/*', 'png', 'image/png'],
    ['png, no format, webp refused', png, {}, 'image/webp;q=0, image/png', 'png', 'image/png'],
    ['jpeg, no format, no Accept', jpeg, {}, undefined, 'jpeg', 'image/jpeg'],
    ['jpeg, avif, no Accept', jpeg, { format: 'avif' }, undefined, 'heif', 'image/avif'],
    ['png, webp, no Accept', png, { format: 'webp' }, undefined, 'webp', 'image/webp'],
  ]
  for (const [name, source, extra, accept, format, contentType] of cases) {
    const out = await render(source, options(extra), accept)
    const read = await meta(out.body)
    t.same([read.format, out.contentType], [format, contentType], name)
    if (format === 'heif') t.equal(read.compression, 'av1', `${name}: AV1 inside the HEIF box`)
  }
  t.ok(acceptsWebp('text/html, image/WebP;q=0.5'))
  t.notOk(acceptsWebp('image/webp;q=0'))
  t.notOk(acceptsWebp('image/*'))
  t.notOk(acceptsWebp(undefined))
})

t.test('svg is returned as it is unless webp or avif is asked for; then drawn at the size asked', async (t) => {
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50"><rect width="100" height="50" fill="#0af"/></svg>')
  const kept = await render(svg, options({ width: 20 }), 'image/webp', 'image/svg+xml; charset=utf-8')
  t.same([kept.body.equals(svg), kept.contentType], [true, 'image/svg+xml; charset=utf-8'])
  t.equal((await render(svg, options({ format: 'origin' }), undefined, 'application/octet-stream')).contentType, 'image/svg+xml', 'the bytes decide, not the declared type')
  const drawn = await render(svg, options({ width: 400, format: 'webp' }))
  const read = await meta(drawn.body)
  t.same([read.format, read.width, read.height, drawn.contentType], ['webp', 400, 200, 'image/webp'], 'a vector is drawn larger')
})

t.test('animated gif: frames kept where the output animates, capped, counted against the pixel limit', async (t) => {
  const frame = (background: string) => sharp({ create: { width: 40, height: 30, channels: 3, background } }).png().toBuffer()
  const gif = await sharp([await frame('red'), await frame('blue'), await frame('lime')], { join: { animated: true } }).gif().toBuffer()
  const pages = async (out: { body: Buffer }) => {
    const read = await sharp(out.body, { pages: -1 }).metadata()
    return [read.format, read.pages ?? 1, read.width, read.pageHeight ?? read.height]
  }
  t.same(await pages(await render(gif, options({ width: 20 }), 'image/webp')), ['webp', 3, 20, 15])
  t.same(await pages(await render(gif, options({ format: 'origin' }))), ['gif', 3, 40, 30])
  t.same(await pages(await render(gif, options({ format: 'avif' }))), ['heif', 1, 40, 30], 'avif does not animate: the first frame')
  t.same(await pages(await renderImage(chunks(gif), options({ format: 'origin' }), undefined, 'image/gif', { ...RENDER_LIMITS, maxFrames: 2 })), ['gif', 2, 40, 30])
  const small = { ...RENDER_LIMITS, maxPixels: 3000 }
  await t.rejects(renderImage(chunks(gif), options({ format: 'origin' }), undefined, 'image/gif', small), { name: 'ImageTooLarge', limit: 'pixels' }, 'three frames of 1200 pixels')
  t.same(await pages(await renderImage(chunks(gif), options({ format: 'avif' }), undefined, 'image/gif', small)), ['heif', 1, 40, 30], 'one frame fits')
})

t.test('what is not an image is refused in Supabase words', async (t) => {
  const expected = { name: 'NotAnImage', code: 'not_an_image', message: 'The source image is invalid or unsupported for rendering', status: 400, storageCode: 'InvalidRequest' }
  await t.rejects(render(Buffer.from('just some text, not an image'), options({ width: 10 }), 'image/webp', 'image/png'), expected)
  await t.rejects(render(Buffer.alloc(0), options()), expected, 'empty')
  const jpeg = await sharp(await noise(200, 200)).jpeg().toBuffer()
  await t.rejects(render(jpeg.subarray(0, 400), options({ width: 50 })), expected, 'a header over bytes that do not decode')
  await t.rejects(render(Buffer.from('%PDF-1.7\n%âãÏÓ\n1 0 obj\n'), options()), expected, 'a format this build does not read')
  const refused = await render(Buffer.from('nope'), options()).catch((error: unknown) => error)
  t.ok(refused instanceof NotAnImage)
})

t.test('a source past 25 MB is refused while it streams, without reading the rest', async (t) => {
  t.equal(MAX_SOURCE_BYTES, 25_000_000)
  const MiB = Buffer.alloc(1024 * 1024)
  let pulled = 0
  let finished = false
  async function* endless(): AsyncGenerator<Uint8Array> {
    try {
      for (;;) {
        pulled += MiB.length
        yield MiB
      }
    } finally {
      finished = true
    }
  }
  const expected = { name: 'ImageTooLarge', code: 'image_too_large', limit: 'bytes', message: 'The source image file is too large to process', status: 400, storageCode: 'InvalidRequest' }
  await t.rejects(renderImage(endless(), options({ width: 10 }), undefined, 'image/png'), expected)
  t.equal(pulled, 24 * MiB.length, 'stopped at the chunk that crossed 25,000,000 bytes (24 MiB)')
  t.ok(finished, 'the source was returned (closed)')

  let read = 0
  const stream = new Readable({ read() { read += MiB.length; this.push(MiB) } })
  await t.rejects(renderImage(stream, options(), undefined, 'image/png'), expected, 'a Readable too')
  t.ok(stream.destroyed, 'and destroyed')
  t.ok(read <= 26 * MiB.length, `read ${read} bytes`)

  const png = await noise(16, 16)
  const exact = { ...RENDER_LIMITS, maxBytes: png.length }
  t.equal((await renderImage(chunks(png.subarray(0, 10), png.subarray(10)), options({ format: 'origin' }), undefined, 'image/png', exact)).contentType, 'image/png', 'exactly the limit is served')
  await t.rejects(renderImage(chunks(png), options(), undefined, 'image/png', { ...exact, maxBytes: png.length - 1 }), { name: 'ImageTooLarge', limit: 'bytes' })
  const error = await renderImage(chunks(png), options(), undefined, 'image/png', { ...exact, maxBytes: 1 }).catch((e: unknown) => e)
  t.ok(error instanceof ImageTooLarge)
})

t.test('a source past 50 megapixels is refused from its header', async (t) => {
  const expected = { name: 'ImageTooLarge', code: 'image_too_large', limit: 'pixels', message: 'The source image resolution is too large to process' }
  await t.rejects(render(pngHeader(7072, 7072), options({ width: 100 })), expected, '50,013,184 pixels')
  await t.rejects(render(pngHeader(50_000_001, 1), options()), expected, 'one too many')
  await t.rejects(render(pngHeader(50_000_000, 1), options()), { name: 'NotAnImage' }, 'exactly the limit passes the check and fails on the missing pixels')
})

t.test('transformKey: stable, and different where the rendering differs', async (t) => {
  const base = options({ width: 100, height: 100 })
  const key = transformKey(base, undefined)
  t.match(key, /^[0-9a-f]{16}$/)
  t.equal(key, '15f4b49169bef52b', 'the same across runs, so cached renderings stay found')
  t.equal(transformKey({ ...base }, undefined), key)
  t.equal(transformKey({ quality: 80, format: 'auto', resize: 'cover', height: 100, width: 100 }, undefined), key, 'property order does not matter')
  const others = [
    transformKey({ ...base, width: 101 }, undefined),
    transformKey({ ...base, height: 99 }, undefined),
    transformKey(options({ width: 100 }), undefined),
    transformKey({ ...base, resize: 'contain' }, undefined),
    transformKey({ ...base, resize: 'fill' }, undefined),
    transformKey({ ...base, quality: 81 }, undefined),
    transformKey({ ...base, format: 'webp' }, undefined),
    transformKey({ ...base, format: 'avif' }, undefined),
  ]
  t.equal(new Set([key, ...others]).size, others.length + 1, 'every difference, its own key')
  t.equal(transformKey(base, 'image/webp,*/*'), transformKey({ ...base, format: 'webp' }, undefined), 'negotiated WebP is WebP')
  t.equal(transformKey(base, 'image/avif,*/*'), transformKey({ ...base, format: 'origin' }, 'image/webp'), 'no WebP in Accept is the source format')
  t.equal(transformKey(options({ resize: 'contain' }), undefined), transformKey(options({ resize: 'fill' }), undefined), 'resize without a side changes nothing')
})

t.test('plans: transforms from Supabase Pro (Baseplane plus) up, not on free', async (t) => {
  t.same(PLANS.map((plan) => [plan, transformsOffered(plan)]), [['free', false], ['plus', true], ['pro', true], ['business', true]])
})
