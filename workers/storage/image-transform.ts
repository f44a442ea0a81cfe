// Supabase Storage's image transformations (the /render/image routes, and the
// `transform` option of storage-js's download, createSignedUrl and
// getPublicUrl), rendered with sharp where Supabase runs imgproxy. The rules
// are Supabase's as its storage server (supabase/storage, src/storage/renderer/
// image.ts and src/http/schemas/transformations.ts) and its imgproxy settings
// (supabase/cli, internal/start/start.go) make them, not only as its docs
// (guides/storage/serving/image-transformations) state them:
//
// - width and height are integers; 0 (and absence) leaves a side free, a value
//   over the limit is clamped to it rather than refused (storage-api clamps
//   before calling imgproxy), a negative or a non-integer is refused in the
//   words of the server's JSON schema ("querystring/width must be integer").
// - resize is cover (default), contain or fill: imgproxy's fill, fit and
//   force. None of them enlarges a raster source, and contain does not pad:
//   imgproxy's fit returns the scaled image, smaller than the box on one side.
// - quality is 20 to 100, 80 when absent.
// - without a format the output is WebP when the client's Accept names
//   image/webp, and the source's own format otherwise; Supabase negotiates
//   nothing else (AVIF only when asked for as format=avif). format=origin is
//   the source's format whatever Accept says. An SVG source is returned as it
//   is unless format=webp or format=avif is asked for.
// - a source over 25 MB or 50 megapixels is refused, as is anything that is
//   not an image this build of libvips reads.
import { createHash } from 'node:crypto'
import type SharpFactory from 'sharp'
import type { Metadata } from 'sharp'
import { STORAGE_LIMITS, type Plan } from '../../lib/plans.ts'

export type ResizeMode = 'cover' | 'contain' | 'fill'
/** `auto`: no format asked for, so Accept decides (WebP or the source's format). */
export type FormatOption = 'auto' | 'origin' | 'webp' | 'avif'

export interface TransformOptions {
  /** 1..MAX_DIMENSION; absent: the side follows from the other and the aspect ratio. */
  width?: number
  height?: number
  resize: ResizeMode
  quality: number
  format: FormatOption
}

/** What imgproxy's `max_src_resolution` and Supabase's docs say: 50 MP, counted over the frames rendered. */
export const MAX_SOURCE_PIXELS = 50_000_000
/** IMGPROXY_MAX_SRC_FILE_SIZE as the Supabase CLI sets it (25000000, "25MB" in the docs). */
export const MAX_SOURCE_BYTES = 25_000_000
/** The docs' limit for width and height; a larger value is clamped to it. */
export const MAX_DIMENSION = 2500
export const MIN_QUALITY = 20
export const MAX_QUALITY = 100
export const DEFAULT_QUALITY = 80
/** IMGPROXY_MAX_ANIMATION_FRAMES as the Supabase CLI sets it: later frames are dropped. */
export const MAX_ANIMATION_FRAMES = 60
/** imgproxy's default IMGPROXY_TIMEOUT: a rendering that takes longer is abandoned. */
export const RENDER_TIMEOUT_SECONDS = 10

export interface RenderLimits {
  maxBytes: number
  maxPixels: number
  maxFrames: number
  timeoutSeconds: number
}

export const RENDER_LIMITS: Readonly<RenderLimits> = Object.freeze({
  maxBytes: MAX_SOURCE_BYTES,
  maxPixels: MAX_SOURCE_PIXELS,
  maxFrames: MAX_ANIMATION_FRAMES,
  timeoutSeconds: RENDER_TIMEOUT_SECONDS,
})

/**
 * Every refusal here is a 400 whose body carries `InvalidRequest`, as
 * Supabase's storage server answers them (its ImageProcessingError and schema
 * failures); `code` tells them apart for the platform's logs and tests.
 */
export abstract class ImageTransformError extends Error {
  abstract readonly code: string
  readonly status = 400
  readonly storageCode = 'InvalidRequest'
}

export type TransformParameter = 'width' | 'height' | 'resize' | 'quality' | 'format'

export class TransformOptionsInvalid extends ImageTransformError {
  readonly code: `invalid_${TransformParameter}`
  constructor(readonly parameter: TransformParameter, message: string) {
    super(message)
    this.name = 'TransformOptionsInvalid'
    this.code = `invalid_${parameter}`
  }
}

export class NotAnImage extends ImageTransformError {
  readonly code = 'not_an_image'
  constructor(options?: { cause?: unknown }) {
    super('The source image is invalid or unsupported for rendering', options)
    this.name = 'NotAnImage'
  }
}

export class ImageTooLarge extends ImageTransformError {
  readonly code = 'image_too_large'
  constructor(readonly limit: 'bytes' | 'pixels', options?: { cause?: unknown }) {
    super(limit === 'bytes' ? 'The source image file is too large to process' : 'The source image resolution is too large to process', options)
    this.name = 'ImageTooLarge'
  }
}

export class ImageRenderTimeout extends ImageTransformError {
  readonly code = 'render_timeout'
  constructor(options?: { cause?: unknown }) {
    super('Image request timed out', options)
    this.name = 'ImageRenderTimeout'
  }
}

const RESIZE_MODES: readonly string[] = ['cover', 'contain', 'fill']
const FORMATS: readonly string[] = ['origin', 'webp', 'avif']

/**
 * One query parameter as the server's schema coerces it: a repeated parameter
 * is an array there and fails the scalar type, so it fails here too.
 */
function single(query: URLSearchParams, name: TransformParameter, type: string): string | undefined {
  const values = query.getAll(name)
  if (values.length > 1) throw new TransformOptionsInvalid(name, `querystring/${name} must be ${type}`)
  return values[0]
}

function integer(query: URLSearchParams, name: TransformParameter): number | undefined {
  const raw = single(query, name, 'integer')
  if (raw === undefined) return undefined
  if (!/^-?\d+$/.test(raw)) throw new TransformOptionsInvalid(name, `querystring/${name} must be integer`)
  return Number(raw)
}

function dimension(query: URLSearchParams, name: 'width' | 'height'): number | undefined {
  const value = integer(query, name)
  if (value === undefined) return undefined
  if (value < 0) throw new TransformOptionsInvalid(name, `querystring/${name} must be >= 0`)
  // storage-api skips a 0 (falsy) side and clamps the rest, so a Next.js
  // loader asking for its 3840 device width still gets an image.
  return value === 0 ? undefined : Math.min(value, MAX_DIMENSION)
}

function oneOf<T extends string>(query: URLSearchParams, name: TransformParameter, allowed: readonly string[]): T | undefined {
  const raw = single(query, name, 'string')
  if (raw === undefined) return undefined
  if (!allowed.includes(raw)) throw new TransformOptionsInvalid(name, `querystring/${name} must be equal to one of the allowed values`)
  return raw as T
}

/** The transformation a render URL asks for; other parameters (download, token, versionId) are not read. */
export function transformOptionsFrom(query: URLSearchParams): TransformOptions {
  const width = dimension(query, 'width')
  const height = dimension(query, 'height')
  const resize = oneOf<ResizeMode>(query, 'resize', RESIZE_MODES) ?? 'cover'
  const quality = integer(query, 'quality') ?? DEFAULT_QUALITY
  if (quality < MIN_QUALITY) throw new TransformOptionsInvalid('quality', `querystring/quality must be >= ${MIN_QUALITY}`)
  if (quality > MAX_QUALITY) throw new TransformOptionsInvalid('quality', `querystring/quality must be <= ${MAX_QUALITY}`)
  const format = oneOf<Exclude<FormatOption, 'auto'>>(query, 'format', FORMATS) ?? 'auto'
  const options: TransformOptions = { resize, quality, format }
  if (width !== undefined) options.width = width
  if (height !== undefined) options.height = height
  return options
}

/**
 * Whether Accept names image/webp with a q above 0. Wildcards do not count:
 * imgproxy looks for the literal type, old clients accept any type for
 * everything, and browsers that decode WebP list it.
 */
export function acceptsWebp(accept: string | undefined): boolean {
  if (!accept) return false
  for (const range of accept.split(',')) {
    const [type, ...params] = range.split(';').map((part) => part.trim().toLowerCase())
    if (type !== 'image/webp') continue
    const q = params.find((param) => param.startsWith('q='))
    if (q === undefined || Number(q.slice(2)) > 0) return true
  }
  return false
}

/** The format asked for once Accept has been heard: `origin` is the source's own. */
function requestedFormat(format: FormatOption, accept: string | undefined): 'origin' | 'webp' | 'avif' {
  if (format !== 'auto') return format
  return acceptsWebp(accept) ? 'webp' : 'origin'
}

/**
 * Raised when a change to this file renders the same options differently, so
 * renderings cached under the old keys are never served again.
 */
const RENDER_REVISION = 1

/**
 * The name a rendering is cached under (`<ref>/render/<version>/<key>`). It
 * takes Accept because an unformatted request renders WebP for one client and
 * the source's format for another: two renderings, two keys. Options that
 * cannot change the output are normalised away (resize without a side).
 */
export function transformKey(options: TransformOptions, accept: string | undefined): string {
  const sized = options.width !== undefined || options.height !== undefined
  const material = JSON.stringify([
    RENDER_REVISION,
    options.width ?? 0,
    options.height ?? 0,
    sized ? options.resize : 'cover',
    options.quality,
    requestedFormat(options.format, accept),
  ])
  return createHash('sha256').update(material).digest('hex').slice(0, 16)
}

type Sharp = typeof SharpFactory
let loading: Promise<Sharp> | undefined

/**
 * sharp loads libvips, a native library of tens of megabytes, so it is loaded
 * on the first rendering: the data plane and a manifest can read the options
 * and the plans without it.
 *
 * libvips is process-wide and the data plane serves every tenant from the same
 * process. concurrency(1) keeps each rendering to one libvips thread, so a
 * rendering occupies one of libuv's pool threads and nothing more: a tenant
 * sending many large transforms queues behind that pool instead of spreading
 * over every core. The operation cache is off: it keys on the input, renderings
 * of distinct objects rarely share one, and at its default (50 MB, 100
 * operations, shared) it would hold one tenant's decoded pixels in memory that
 * every tenant pays for. Renderings worth keeping are kept in the blob store.
 */
function loadSharp(): Promise<Sharp> {
  loading ??= import('sharp').then(({ default: sharp }) => {
    sharp.concurrency(1)
    sharp.cache(false)
    return sharp
  })
  return loading
}

/**
 * The source's bytes, refused once they pass `limit` and never held beyond it:
 * the read stops at the chunk that crosses it (leaving the loop returns the
 * iterator, which destroys a Readable). libvips needs the whole encoded image
 * before it decodes most formats, and sharp would gather a piped stream into
 * one buffer anyway; gathering it here costs nothing more and lets an SVG be
 * returned as its own bytes.
 */
async function readBounded(input: AsyncIterable<Uint8Array | string> | NodeJS.ReadableStream, limit: number): Promise<Buffer> {
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of input as AsyncIterable<Uint8Array | string>) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    size += bytes.byteLength
    if (size > limit) throw new ImageTooLarge('bytes')
    chunks.push(bytes)
  }
  return Buffer.concat(chunks, size)
}

type SourceFormat = 'jpeg' | 'png' | 'webp' | 'gif' | 'avif' | 'heic' | 'tiff' | 'svg'
type OutputFormat = 'jpeg' | 'png' | 'webp' | 'gif' | 'avif' | 'tiff'

const CONTENT_TYPES: Readonly<Record<OutputFormat, string>> = {
  jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp', gif: 'image/gif', avif: 'image/avif', tiff: 'image/tiff',
}

function sourceFormat(format: string | undefined, compression: string | undefined): SourceFormat | undefined {
  switch (format) {
    case 'jpeg': case 'png': case 'webp': case 'gif': case 'tiff': case 'svg':
      return format
    case 'heif':
      return compression === 'av1' ? 'avif' : 'heic'
    default:
      return undefined
  }
}

/** The size of the output, as imgproxy's calcScale and crop make it for fill (cover), fit (contain) and force (fill). */
function outputSize(
  srcW: number, srcH: number, options: TransformOptions, vector: boolean,
): { width: number; height: number; crop: boolean; scale: number } | undefined {
  const { width, height, resize } = options
  if (width === undefined && height === undefined) return undefined
  let wShrink = width === undefined || width === srcW ? 1 : srcW / width
  let hShrink = height === undefined || height === srcH ? 1 : srcH / height
  if (wShrink !== 1 || hShrink !== 1) {
    if (width === undefined && resize !== 'fill') wShrink = hShrink
    else if (height === undefined && resize !== 'fill') hShrink = wShrink
    else if (resize === 'contain') wShrink = hShrink = Math.max(wShrink, hShrink)
    else if (resize === 'cover') wShrink = hShrink = Math.min(wShrink, hShrink)
  }
  // imgproxy never enlarges a raster (Supabase sends no `enlarge`): the scale
  // is brought back to 1 on the side that would grow, the ratio kept. An SVG
  // is drawn at the size asked for.
  const least = Math.min(wShrink, hShrink)
  if (!vector && least < 1) {
    wShrink /= least
    hShrink /= least
  }
  const scaledW = Math.max(1, Math.round(srcW / wShrink))
  const scaledH = Math.max(1, Math.round(srcH / hShrink))
  const scale = Math.max(1 / wShrink, 1 / hShrink)
  if (resize !== 'cover') return { width: scaledW, height: scaledH, crop: false, scale }
  // fill crops what projects past the box, centred; a free side is not cropped.
  return { width: Math.min(width ?? scaledW, scaledW), height: Math.min(height ?? scaledH, scaledH), crop: true, scale }
}

/**
 * Renders `input` (the object's bytes, `sourceContentType` as its row records
 * it) as `options` and the client's `accept` ask. The bytes decide the format,
 * as with imgproxy; the declared type only names an SVG returned as it is.
 */
export async function renderImage(
  input: AsyncIterable<Uint8Array> | NodeJS.ReadableStream,
  options: TransformOptions,
  accept: string | undefined,
  sourceContentType: string,
  limits: Readonly<RenderLimits> = RENDER_LIMITS,
): Promise<{ body: Buffer; contentType: string }> {
  const source = await readBounded(input, limits.maxBytes)
  const sharp = await loadSharp()

  let metadata: Metadata
  try {
    // Headers only: the pixel limit is checked below, on the frames to be rendered.
    metadata = await sharp(source, { limitInputPixels: false }).metadata()
  } catch (error) {
    throw new NotAnImage({ cause: error })
  }
  const format = sourceFormat(metadata.format, metadata.compression)
  if (format === undefined || metadata.width === undefined || metadata.height === undefined) throw new NotAnImage()

  // imgproxy hands an SVG back untouched unless a format is named: a negotiated
  // WebP does not count, so a browser gets the vector, sized by its own markup.
  if (format === 'svg' && (options.format === 'auto' || options.format === 'origin')) {
    const declared = sourceContentType.split(';')[0]!.trim().toLowerCase()
    return { body: source, contentType: declared === 'image/svg+xml' ? sourceContentType : 'image/svg+xml' }
  }

  const requested = requestedFormat(options.format, accept)
  const output: OutputFormat = requested !== 'origin'
    ? requested
    : format === 'svg' || format === 'heic' ? (metadata.hasAlpha ? 'png' : 'jpeg') : format
  const frames = metadata.pages ?? 1
  const animated = frames > 1 && (format === 'gif' || format === 'webp') && (output === 'gif' || output === 'webp')
  const pages = animated ? Math.min(frames, limits.maxFrames) : 1

  // Sizes are of what the viewer sees: one frame, turned as EXIF says.
  const frameW = metadata.autoOrient?.width ?? metadata.width
  const frameH = animated ? (metadata.pageHeight ?? metadata.height) : (metadata.autoOrient?.height ?? metadata.height)
  const vector = format === 'svg'
  const size = outputSize(frameW, frameH, options, vector)
  // An SVG is drawn at the density that gives the size asked for rather than drawn small and enlarged.
  const density = vector && size && size.scale > 1 ? Math.min(72 * size.scale, 72 * 64) : undefined
  const drawn = density === undefined ? 1 : density / 72
  if (frameW * drawn * frameH * drawn * pages > limits.maxPixels) throw new ImageTooLarge('pixels')

  let image = sharp(source, { limitInputPixels: limits.maxPixels, pages, ...(density === undefined ? {} : { density }) })
    .timeout({ seconds: limits.timeoutSeconds })
  // Multi-page images cannot be turned, and GIF and WebP carry no orientation to obey.
  if (!animated) image = image.rotate()
  if (size) image = image.resize(size.width, size.height, { fit: size.crop ? 'cover' : 'fill', position: 'centre' })
  switch (output) {
    // imgproxy's JPEG is progressive in Supabase's documented setup (IMGPROXY_JPEG_PROGRESSIVE).
    case 'jpeg': image = image.jpeg({ quality: options.quality, progressive: true }); break
    case 'webp': image = image.webp({ quality: options.quality }); break
    // Effort 2 of 9: AVIF's default effort costs seconds of CPU per image, imgproxy defaults to its fast end too.
    case 'avif': image = image.avif({ quality: options.quality, effort: 2 }); break
    case 'tiff': image = image.tiff({ quality: options.quality }); break
    // Lossless or palette formats: imgproxy has no quality for them either.
    case 'png': image = image.png(); break
    case 'gif': image = image.gif(); break
  }

  try {
    return { body: await image.toBuffer(), contentType: CONTENT_TYPES[output] }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    if (/exceeds pixel limit/i.test(message)) throw new ImageTooLarge('pixels', { cause: error })
    if (/timeout/i.test(message)) throw new ImageRenderTimeout({ cause: error })
    // A header that read well over bytes that do not decode (a truncated JPEG, HEVC this build cannot read).
    throw new NotAnImage({ cause: error })
  }
}

/** Whether the plan's projects may render (lib/plans.ts STORAGE_LIMITS: Supabase offers it from its Pro plan up, not on Free). */
export function transformsOffered(plan: Plan): boolean {
  return STORAGE_LIMITS[plan].imageTransformations
}
