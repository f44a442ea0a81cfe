// The byte backend of a single node: files under a folder of the platform home.
// A write goes to a temporary file on the same filesystem and is renamed into
// place once fsynced, so a reader sees either no blob or all of it, and a
// crash, a truncated upload or a full disk leaves nothing under the key.
import { constants as fsConstants, type ReadStream } from 'node:fs'
import { copyFile, link, mkdir, open, readdir, readFile, rename, rm, rmdir, stat, unlink } from 'node:fs/promises'
import { createHash, randomBytes } from 'node:crypto'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { BlobMissing, BlobStoreUnavailable, type BlobStore, type ByteRange, type WrittenBlob } from './blob-store.ts'

/** Where writes in progress live, inside the root so that the final rename never crosses filesystems. */
const TEMPORARY = '.tmp'
/** A temporary file untouched this long belongs to a write that died with its process. */
const STALE_TEMPORARY_MILLIS = 60 * 60 * 1000
/** S3's own limit on a key, so a key one backend takes the other takes too. */
const MAX_KEY_LENGTH = 1024
/** Most filesystems' limit on one name. */
const MAX_SEGMENT_LENGTH = 255
const SEGMENT = /^[a-z0-9_-]+$/
/** Deletes run this many unlinks at once: enough to hide latency, few enough to keep descriptors free. */
const DELETE_CONCURRENCY = 16

/**
 * The segments of `key`, or a plain Error when it is not one Storage makes
 * (`<ref>/<uuid>`, `<ref>/render/<uuid>/<hash>`): two or more segments of
 * `[a-z0-9_-]`, so no key can name `.`, `..`, a hidden file or another root.
 * Both backends check with it, so they refuse the same keys.
 */
export function keySegments(key: string): string[] {
  const segments = key.split('/')
  if (key.length > MAX_KEY_LENGTH || segments.length < 2 || !segments.every(validSegment)) {
    throw new Error(`invalid blob key ${JSON.stringify(key)}: expected two or more segments of [a-z0-9_-] separated by /`)
  }
  return segments
}

/**
 * The segments of a prefix handed to deletePrefix: whole segments ending with
 * `/` (`<ref>/`). A partial segment is refused rather than matched as a string,
 * since on S3 `abc` would also take `abcd/`: another project's bytes.
 */
export function prefixSegments(prefix: string): string[] {
  const segments = prefix.split('/')
  const last = segments.pop()
  if (prefix.length > MAX_KEY_LENGTH || last !== '' || segments.length < 1 || !segments.every(validSegment)) {
    throw new Error(`invalid blob prefix ${JSON.stringify(prefix)}: expected one or more segments of [a-z0-9_-], each followed by /`)
  }
  return segments
}

function validSegment(segment: string): boolean {
  return segment.length <= MAX_SEGMENT_LENGTH && SEGMENT.test(segment)
}

/** Codes of a filesystem that cannot take or give bytes for now: Storage answers 503 rather than 500. */
const UNAVAILABLE_CODES = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EROFS', 'EMFILE', 'ENFILE', 'EAGAIN', 'EBUSY'])

/** A path that names no blob: nothing there, or a blob where a folder of the path would be. */
const ABSENT_CODES = new Set(['ENOENT', 'ENOTDIR'])

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

/** `error` as the contract names it, when it is the disk's failure rather than the caller's or ours. */
function diskError(error: unknown, doing: string): unknown {
  const code = codeOf(error)
  return code !== undefined && UNAVAILABLE_CODES.has(code) ? new BlobStoreUnavailable(`local store: ${doing}: ${code}`, { cause: error }) : error
}

async function removeQuietly(file: string): Promise<void> {
  await unlink(file).catch((error: unknown) => {
    if (!ABSENT_CODES.has(codeOf(error) ?? '')) throw error
  })
}

/**
 * Makes a rename durable: the new directory entry is only on disk once its
 * directory is. Platforms that cannot open a directory for syncing (EISDIR,
 * EPERM on some filesystems) are left as they are.
 */
async function syncDirectory(folder: string): Promise<void> {
  let handle
  try {
    handle = await open(folder, 'r')
    await handle.sync()
  } catch (error) {
    if (!['EISDIR', 'EPERM', 'EINVAL', 'EBADF'].includes(codeOf(error) ?? '')) throw error
  } finally {
    await handle?.close()
  }
}

export class LocalBlobStore implements BlobStore {
  readonly kind = 'local' as const
  readonly root: string
  readonly #temporary: string

  constructor(root: string) {
    this.root = path.resolve(root)
    this.#temporary = path.join(this.root, TEMPORARY)
  }

  /** The content type is not kept: the object's row has it, and the bytes are served from there. */
  async put(key: string, body: AsyncIterable<Uint8Array>, _contentType: string): Promise<WrittenBlob> {
    const target = this.#pathOf(key)
    const temporary = this.#temporaryFile()
    const digest = createHash('md5')
    let size = 0
    // The body's own failure is handed back as it is (the contract); only the disk's is translated.
    let bodyFailed = false
    async function* metered(): AsyncGenerator<Uint8Array> {
      try {
        for await (const chunk of body) {
          digest.update(chunk)
          size += chunk.byteLength
          yield chunk
        }
      } catch (error) {
        bodyFailed = true
        throw error
      }
    }
    try {
      // Opened here, not by the stream, so that once the pipeline has failed no open still under way
      // can create the file after it was removed below. The stream fsyncs (`flush`) and closes the
      // handle before the pipeline settles, whichever way it ends.
      await mkdir(this.#temporary, { recursive: true })
      const handle = await open(temporary, 'wx', 0o600)
      await pipeline(metered, handle.createWriteStream({ flush: true }))
      await this.#publish(temporary, target)
    } catch (error) {
      await removeQuietly(temporary)
      throw bodyFailed ? error : diskError(error, `writing ${key}`)
    }
    return { size, etag: `"${digest.digest('hex')}"` }
  }

  async get(key: string, range?: ByteRange): Promise<ReadStream> {
    const file = this.#pathOf(key)
    if (range !== undefined) checkRange(range)
    // Opened here rather than by the stream, so a missing blob rejects instead of failing the stream later.
    const handle = await open(file, 'r').catch((error: unknown) => {
      throw ABSENT_CODES.has(codeOf(error) ?? '') ? new BlobMissing(key) : diskError(error, `reading ${key}`)
    })
    try {
      const stats = await handle.stat()
      // A folder opens for reading too: a key that is the folder of deeper keys holds no blob itself.
      if (!stats.isFile()) throw new BlobMissing(key)
      if (range !== undefined && range.start >= stats.size) {
        throw new RangeError(`range ${range.start}-${range.end} starts past the ${stats.size} bytes of ${key}`)
      }
      return handle.createReadStream({ start: range?.start, end: range?.end, autoClose: true })
    } catch (error) {
      await handle.close()
      throw error
    }
  }

  async copy(from: string, to: string): Promise<void> {
    const source = this.#pathOf(from)
    const target = this.#pathOf(to)
    const temporary = this.#temporaryFile()
    try {
      await mkdir(this.#temporary, { recursive: true })
      // A reflink where the filesystem has them (a copy that shares the blocks), a plain copy elsewhere.
      await copyFile(source, temporary, fsConstants.COPYFILE_EXCL | fsConstants.COPYFILE_FICLONE)
      const handle = await open(temporary, 'r+')
      try {
        await handle.sync()
      } finally {
        await handle.close()
      }
      await this.#publish(temporary, target)
    } catch (error) {
      await removeQuietly(temporary)
      throw !(await isFile(source)) ? new BlobMissing(from) : diskError(error, `copying ${from} to ${to}`)
    }
  }

  async delete(keys: readonly string[]): Promise<void> {
    // Every key is checked before any file goes, so a bad key deletes nothing.
    const files = keys.map((key) => this.#pathOf(key))
    for (let next = 0; next < files.length; next += DELETE_CONCURRENCY) {
      await Promise.all(files.slice(next, next + DELETE_CONCURRENCY).map((file) => this.#deleteFile(file)))
    }
  }

  async deletePrefix(prefix: string): Promise<void> {
    const folder = path.join(this.root, ...prefixSegments(prefix))
    await rm(folder, { recursive: true, force: true }).catch((error: unknown) => {
      throw diskError(error, `deleting ${prefix}`)
    })
  }

  async close(): Promise<void> {}

  /**
   * Removes temporary files of writes that died with their process (a crash
   * between the first byte and the rename). Judged by the last write, not the
   * creation, so a slow upload still writing is left alone. Answers how many went.
   */
  async sweepTemporary(olderThanMillis = STALE_TEMPORARY_MILLIS): Promise<number> {
    let names: string[]
    try {
      names = await readdir(this.#temporary)
    } catch (error) {
      if (codeOf(error) === 'ENOENT') return 0
      throw error
    }
    const before = Date.now() - olderThanMillis
    let removed = 0
    for (const name of names) {
      const file = path.join(this.#temporary, name)
      const stats = await stat(file).catch(() => undefined)
      if (stats === undefined || stats.mtimeMs >= before) continue
      await rm(file, { force: true, recursive: true })
      removed++
    }
    return removed
  }

  #pathOf(key: string): string {
    return path.join(this.root, ...keySegments(key))
  }

  #temporaryFile(): string {
    return path.join(this.#temporary, randomBytes(16).toString('hex'))
  }

  /**
   * Renames a complete temporary file onto its key. A delete that removes an
   * emptied folder can race the mkdir here (the rename then finds no folder),
   * so that case is tried again.
   */
  async #publish(temporary: string, target: string): Promise<void> {
    const folder = path.dirname(target)
    for (let attempt = 1; ; attempt++) {
      await mkdir(folder, { recursive: true })
      try {
        await rename(temporary, target)
        break
      } catch (error) {
        if (codeOf(error) !== 'ENOENT' || attempt === 3 || !(await exists(temporary))) throw error
      }
    }
    await syncDirectory(folder)
  }

  async #deleteFile(file: string): Promise<void> {
    try {
      await unlink(file)
    } catch (error) {
      if (ABSENT_CODES.has(codeOf(error) ?? '')) return
      // A key that is the folder of deeper keys holds no blob: nothing to delete (Linux says EISDIR, POSIX EPERM).
      if (['EISDIR', 'EPERM'].includes(codeOf(error) ?? '') && !(await isFile(file))) return
      throw diskError(error, `deleting ${path.relative(this.root, file)}`)
    }
    // Folders a project's deleted blobs leave behind would pile up (one per upload of a render): each
    // emptied one goes, up to the root. A folder still holding something stops it, as does one already gone.
    let folder = path.dirname(file)
    while (folder !== this.root && folder.startsWith(this.root + path.sep)) {
      try {
        await rmdir(folder)
      } catch {
        return
      }
      folder = path.dirname(folder)
    }
  }
}

function checkRange(range: ByteRange): void {
  if (!Number.isSafeInteger(range.start) || !Number.isSafeInteger(range.end) || range.start < 0 || range.end < range.start) {
    throw new RangeError(`invalid byte range ${range.start}-${range.end}`)
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  )
}

async function isFile(file: string): Promise<boolean> {
  return stat(file).then(
    (stats) => stats.isFile(),
    () => false,
  )
}

/** The marker a node of a fleet leaves on the disk it stores blobs on. */
const SHARED_MARKER = '.baseplane-shared-disk'

/**
 * The token of the disk under `root`: made by the first node that asks (a
 * random token in `<root>/.baseplane-shared-disk`), read by every later one.
 * Nodes that see the same token see the same disk: a fleet on local storage
 * compares the token each node finds with the one another node published, and
 * refuses to start when they differ (each node would see only its own uploads).
 */
export async function sharedDiskToken(root: string): Promise<string> {
  const folder = path.resolve(root)
  const marker = path.join(folder, SHARED_MARKER)
  const existing = await readMarker(marker)
  if (existing !== undefined) return existing
  await mkdir(path.join(folder, TEMPORARY), { recursive: true })
  // Written whole elsewhere, then linked: link fails when the marker exists, so two nodes starting
  // together agree on the first one's token, and no node ever reads a half-written marker.
  const temporary = path.join(folder, TEMPORARY, randomBytes(16).toString('hex'))
  const handle = await open(temporary, 'wx', 0o644)
  try {
    await handle.writeFile(`${randomBytes(24).toString('hex')}\n`)
    await handle.sync()
  } finally {
    await handle.close()
  }
  try {
    await link(temporary, marker)
  } catch (error) {
    if (codeOf(error) !== 'EEXIST') throw error
  } finally {
    await removeQuietly(temporary)
  }
  await syncDirectory(folder)
  const token = await readMarker(marker)
  if (token === undefined) throw new Error(`the shared-disk marker ${marker} vanished as it was written`)
  return token
}

async function readMarker(marker: string): Promise<string | undefined> {
  try {
    const token = (await readFile(marker, 'utf8')).trim()
    if (!/^[0-9a-f]{16,}$/.test(token)) throw new Error(`the shared-disk marker ${marker} holds no token: remove it and start again`)
    return token
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return undefined
    throw error
  }
}
