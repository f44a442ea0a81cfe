// What one data API request may ask for, measured while its parameters are
// parsed, before any SQL (issue 29 item 6). The HTTP servers already refuse
// request lines and headers past 16 KB (data-plane/http-server.ts
// MAX_HEADER_BYTES: 431 before any code runs) and bodies past 1 MB
// (lib/http/body.ts MAX_BODY_BYTES); these bound what fits inside: a 16 KB
// query string can hold a few thousand `or` terms or select items, each a
// piece of one SQL statement. The figures are far above what supabase-js
// apps send (tens of columns, a handful of filters) and keep the statement
// well below PostgreSQL's own ceilings (stack depth, planning time).

/** Select items (columns, embeds, `*`) across the whole `select=` tree, embedded ones included. */
export const MAX_SELECT_ITEMS = 500
/** Embeds nested in embeds (`a(b(c(...)))`): each level is a lateral subquery of the statement. */
export const MAX_EMBED_DEPTH = 8
/** Conditions across every filter and logic tree of the request. */
export const MAX_CONDITIONS = 500
/** Logic trees (`or=(and(...))`) nested in one another. */
export const MAX_LOGIC_DEPTH = 16
/** Values of one `in.(...)` list or `{...}` array operand. */
export const MAX_LIST_VALUES = 10_000
/** Order terms. */
export const MAX_ORDER_TERMS = 100
