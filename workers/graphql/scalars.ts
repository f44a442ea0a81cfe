// The custom scalars of pg_graphql's schema and how their inputs are checked
// (BigInt as string or integer, BigFloat as a string only, JSON as a string
// holding JSON; Opaque takes any value).
import { GraphQLScalarType, Kind, valueFromASTUntyped, type ValueNode } from 'graphql'
import { graphqlErrors } from './errors.ts'

function stringScalar(name: string, description: string): GraphQLScalarType {
  return new GraphQLScalarType({
    name,
    description,
    serialize: (value) => value,
    parseValue(value) {
      if (typeof value !== 'string') throw graphqlErrors.invalidInput(name)
      return value
    },
    parseLiteral(ast) {
      if (ast.kind !== Kind.STRING) throw graphqlErrors.invalidInput(name)
      return ast.value
    },
  })
}

export const BigIntScalar = new GraphQLScalarType({
  name: 'BigInt',
  description: 'An arbitrary size integer represented as a string',
  serialize: (value) => value,
  parseValue(value) {
    if (typeof value === 'number' && Number.isInteger(value)) return String(value)
    if (typeof value === 'string' && /^-?\d+$/.test(value)) return value
    throw graphqlErrors.invalidInput('BigInt')
  },
  parseLiteral(ast) {
    if (ast.kind === Kind.INT) return ast.value
    if (ast.kind === Kind.STRING && /^-?\d+$/.test(ast.value)) return ast.value
    throw graphqlErrors.invalidInput('BigInt')
  },
})

export const BigFloatScalar = new GraphQLScalarType({
  name: 'BigFloat',
  description: 'A high precision floating point value represented as a string',
  serialize: (value) => value,
  parseValue(value) {
    if (typeof value !== 'string') throw graphqlErrors.invalidInput('BigFloat').withSuffix('. String required')
    return value
  },
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw graphqlErrors.invalidInput('BigFloat').withSuffix('. String required')
    return ast.value
  },
})

export const OpaqueScalar = new GraphQLScalarType({
  name: 'Opaque',
  description: 'Any type not handled by the type system',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast: ValueNode, variables) => valueFromASTUntyped(ast, variables),
})

// GeoJSON geometry types and how deep their `coordinates` nest above a position.
const GEOMETRY_DEPTH: ReadonlyMap<string, number> = new Map([
  ['Point', 0], ['MultiPoint', 1], ['LineString', 1], ['MultiLineString', 2], ['Polygon', 2], ['MultiPolygon', 3],
])

const isPosition = (p: unknown) => Array.isArray(p) && p.length >= 2 && p.length <= 4 && p.every((n) => typeof n === 'number' && Number.isFinite(n))

function nests(value: unknown, depth: number): boolean {
  if (depth === 0) return isPosition(value)
  return Array.isArray(value) && value.every((v) => nests(v, depth - 1))
}

// RFC 7946 3.1.4 and 3.1.6: a line has two positions or more; a ring four or more, its last the first.
// PostGIS takes an open ring into a geography without a word, so it is checked here.
const isLine = (line: unknown[]) => line.length >= 2
const isRing = (ring: unknown[]) => ring.length >= 4 && JSON.stringify(ring[0]) === JSON.stringify(ring[ring.length - 1])

/** The shape rules beyond nesting, by type, on `coordinates` already known to nest right. */
const SHAPE_RULES: ReadonlyMap<string, (c: unknown[][]) => boolean> = new Map([
  ['LineString', (c: unknown[][]) => isLine(c)],
  ['MultiLineString', (c: unknown[][]) => c.every(isLine)],
  ['Polygon', (c: unknown[][]) => c.every(isRing)],
  ['MultiPolygon', (c: unknown[][]) => c.every((polygon) => (polygon as unknown[][]).every(isRing))],
])

function isGeometry(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const g = value as Record<string, unknown>
  if (g.type === 'GeometryCollection') return Array.isArray(g.geometries) && g.geometries.every(isGeometry)
  const depth = typeof g.type === 'string' ? GEOMETRY_DEPTH.get(g.type) : undefined
  if (depth === undefined) return false
  // An empty Point (`[]`) is PostGIS's POINT EMPTY.
  if (depth === 0 && Array.isArray(g.coordinates) && g.coordinates.length === 0) return true
  return nests(g.coordinates, depth) && (SHAPE_RULES.get(g.type as string)?.(g.coordinates as unknown[][]) ?? true)
}

/**
 * The JSON text of a GeoJSON geometry given as an object or as JSON text,
 * checked for shape here so a bad one is refused before any SQL runs (PostGIS
 * reads it with ST_GeomFromGeoJSON).
 */
export function geoJsonText(value: unknown): string {
  let parsed = value
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value)
    } catch {
      throw graphqlErrors.badGeoJson()
    }
  }
  if (!isGeometry(parsed)) throw graphqlErrors.badGeoJson()
  return JSON.stringify(parsed)
}

export const GeoJSONScalar = new GraphQLScalarType({
  name: 'GeoJSON',
  description: 'A GeoJSON geometry: an object, or its JSON text, as input; an object as output',
  serialize: (value) => value,
  parseValue: geoJsonText,
  parseLiteral(ast, variables) {
    if (ast.kind !== Kind.OBJECT && ast.kind !== Kind.STRING) throw graphqlErrors.badGeoJson()
    return geoJsonText(valueFromASTUntyped(ast, variables))
  },
})

export const CursorScalar = stringScalar('Cursor', 'An opaque string using for tracking a position in results during pagination')
export const DateScalar = stringScalar('Date', 'A date without time information')
export const TimeScalar = stringScalar('Time', 'A time without date information')
export const DatetimeScalar = stringScalar('Datetime', 'A date and time')
export const UUIDScalar = stringScalar('UUID', 'A universally unique identifier')
export const JSONScalar = stringScalar('JSON', 'A Javascript Object Notation value serialized as a string')

export const CUSTOM_SCALARS = [BigFloatScalar, BigIntScalar, CursorScalar, DateScalar, DatetimeScalar, JSONScalar, OpaqueScalar, TimeScalar, UUIDScalar]
