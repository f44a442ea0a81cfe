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

export const CursorScalar = stringScalar('Cursor', 'An opaque string using for tracking a position in results during pagination')
export const DateScalar = stringScalar('Date', 'A date without time information')
export const TimeScalar = stringScalar('Time', 'A time without date information')
export const DatetimeScalar = stringScalar('Datetime', 'A date and time')
export const UUIDScalar = stringScalar('UUID', 'A universally unique identifier')
export const JSONScalar = stringScalar('JSON', 'A Javascript Object Notation value serialized as a string')

export const CUSTOM_SCALARS = [BigFloatScalar, BigIntScalar, CursorScalar, DateScalar, DatetimeScalar, JSONScalar, OpaqueScalar, TimeScalar, UUIDScalar]
