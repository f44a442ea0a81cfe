// `baseplane/cookies`: supabase-js sessions in cookies, in the format of
// @supabase/ssr (SPEC sections 5.4 and 9), for server code and browsers.
// See README.md beside this file.
export { cookieStorage, browserCookieStorage, cookieMethods } from './storage.ts'
export type { CookieJar, ListableCookieJar, CookieStorage, SsrCookieMethods } from './storage.ts'
export { HeaderCookieJar, documentCookieJar, NO_STORE_HEADERS } from './jars.ts'
export { parseCookieHeader, serializeCookie, resolveCookieOptions, DEFAULT_COOKIE_OPTIONS } from './cookie-header.ts'
export type { CookieOptions, CookieAttributes, CookieEntry, SameSite, ResolvedCookieOptions } from './cookie-header.ts'
export {
  MAX_CHUNK_SIZE, BASE64_PREFIX, storageKeyFor, projectStorageKey, isChunkOf, chunkCookies, combineChunks, encodeSessionValue, decodeSessionValue,
} from './session-format.ts'
export { CookieError, type CookieErrorCode } from './errors.ts'
