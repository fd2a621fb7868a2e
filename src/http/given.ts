import { Type, type TSchema } from 'typebox';

/**
 * A request field a client may leave out or send as `null`: both mean "not given", as in the v16
 * API (Go's JSON decoding leaves a `null` field at its zero value). `RequestCheck` names such a
 * field by the type it must have when given.
 */
export function Given<Schema extends TSchema>(schema: Schema) {
  return Type.Optional(Type.Union([schema, Type.Null()]));
}
