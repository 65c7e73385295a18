/**
 * Reading a request's fields the way the demo's FastAPI app did, so the same clients keep
 * working: every missing, mistyped or overlong field is reported at once as a 422 issue list
 * (`missing`, `string_type`, `string_too_long`, `int_parsing`, `model_attributes_type`), and ids
 * that are present but blank or malformed (too long included: the id rule answers for ids) are a
 * 400 with a plain `detail`.
 *
 * The fields come from the routes' JSON schemas (api-schemas.ts): `fieldValidatorCompiler` is
 * fastify's validator compiler for the API, so fastify validates every body and query string in
 * its validation phase, from the same schemas `/openapi.json` shows, and hands the handler the
 * typed fields (defaults filled in, integers parsed). It reads the schemas' `properties`
 * (`type: string | integer`, `default`, `maxLength` in Unicode characters as pydantic counts
 * them; a field marked `x-mnemo-id` is an id, whose length the id rule checks) and `required` itself rather than with ajv, whose
 * errors cannot all be mapped onto these issues (`int_parsing` of "12abc", the last value of a
 * repeated query key, every issue at once in field order).
 *
 * Ids follow the recall layer's one rule (`isValidId`, recall-ids.ts: 1-128 characters, no
 * control characters, no leading or trailing space). Anything else never reaches the layers below.
 */
import type { FastifySchemaCompiler } from 'fastify';
import { ID_RULE, isValidId } from '../recall/index.ts';
import { HttpError, RequestValidationError, type ValidationIssue } from './server-errors.ts';

type Where = 'body' | 'query';

/** What a field must be; a field with a `default` is optional. */
export type FieldSpec =
  | { type: 'string'; default?: string; maxLength?: number }
  | { type: 'int'; default?: number };

type FieldValue<S extends FieldSpec> = S extends { type: 'int' } ? number : string;
export type Fields<T extends Record<string, FieldSpec>> = { [K in keyof T]: FieldValue<T[K]> };

/** The JSON body's fields, or a 422 naming every field that is missing or of the wrong type. */
export function readBody<const T extends Record<string, FieldSpec>>(body: unknown, spec: T): Fields<T> {
  if (body === undefined || body === null) {
    throw new RequestValidationError([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]);
  }
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new RequestValidationError([
      {
        type: 'model_attributes_type',
        loc: ['body'],
        msg: 'Input should be a valid dictionary or object to extract fields from',
        input: body,
      },
    ]);
  }
  return readFields('body', body as Record<string, unknown>, spec, body);
}

/** The query string's fields (the last value wins when a key repeats), or a 422. */
export function readQuery<const T extends Record<string, FieldSpec>>(query: unknown, spec: T): Fields<T> {
  const source: Record<string, unknown> = {};
  if (query && typeof query === 'object') {
    for (const [key, value] of Object.entries(query)) {
      source[key] = Array.isArray(value) ? value[value.length - 1] : value;
    }
  }
  return readFields('query', source, spec, null);
}

function readFields<T extends Record<string, FieldSpec>>(
  where: Where,
  source: Record<string, unknown>,
  spec: T,
  missingInput: unknown,
): Fields<T> {
  const issues: ValidationIssue[] = [];
  const out: Record<string, string | number> = {};
  for (const [name, field] of Object.entries(spec)) {
    const raw = Object.hasOwn(source, name) ? source[name] : undefined;
    if (raw === undefined) {
      if (field.default === undefined) {
        issues.push({ type: 'missing', loc: [where, name], msg: 'Field required', input: missingInput });
      } else {
        out[name] = field.default;
      }
      continue;
    }
    if (field.type === 'string') {
      if (typeof raw !== 'string') {
        issues.push({ type: 'string_type', loc: [where, name], msg: 'Input should be a valid string', input: raw });
      } else if (field.maxLength !== undefined && tooLong(raw, field.maxLength)) {
        const max = field.maxLength;
        issues.push({
          type: 'string_too_long',
          loc: [where, name],
          msg: `String should have at most ${max} character${max === 1 ? '' : 's'}`,
          input: raw,
          ctx: { max_length: max },
        });
      } else {
        out[name] = raw;
      }
      continue;
    }
    const parsed = parseInteger(raw);
    if (parsed === null) {
      issues.push({
        type: 'int_parsing',
        loc: [where, name],
        msg: 'Input should be a valid integer, unable to parse string as an integer',
        input: raw,
      });
    } else {
      out[name] = parsed;
    }
  }
  if (issues.length > 0) throw new RequestValidationError(issues);
  return out as Fields<T>;
}

/** Longer than `max` code points (pydantic's `len`), counted without copying the string. */
function tooLong(text: string, max: number): boolean {
  if (text.length <= max) return false;
  if (text.length > max * 2) return true;
  let points = 0;
  for (const _ of text) if (++points > max) return true;
  return false;
}

function parseInteger(raw: unknown): number | null {
  if (typeof raw === 'number') return Number.isSafeInteger(raw) ? raw : null;
  if (typeof raw !== 'string' || !/^\s*[+-]?\d{1,15}\s*$/.test(raw)) return null;
  return Number.parseInt(raw, 10);
}

/**
 * Checks ids that passed the type check: blank is the demo's 400 ("user_id and session_id are
 * required"), anything else `isValidId` refuses is a 400 naming the field.
 */
export function requireIds(ids: Readonly<Record<string, string>>): void {
  for (const value of Object.values(ids)) {
    if (value.trim() === '') throw new HttpError(400, 'user_id and session_id are required');
  }
  for (const [name, value] of Object.entries(ids)) {
    if (!isValidId(value)) {
      throw new HttpError(400, `invalid ${name}: use ${ID_RULE}`);
    }
  }
}

/** A route schema's part as this reader needs it (a JSON schema of an object of fields). */
interface ObjectSchema {
  properties?: Record<string, { type?: unknown; default?: unknown; maxLength?: unknown; 'x-mnemo-id'?: unknown }>;
  required?: readonly string[];
}

/** The field spec a JSON object schema describes; a field that is not required needs a default. */
export function fieldSpecOf(schema: ObjectSchema, where: string): Record<string, FieldSpec> {
  const spec: Record<string, FieldSpec> = {};
  const required = new Set(schema.required ?? []);
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const fallback = property.default;
    if (!required.has(name) && fallback === undefined) throw new TypeError(`${where}.${name}: an optional field needs a default`);
    if (property.type === 'string') {
      if (fallback !== undefined && typeof fallback !== 'string') throw new TypeError(`${where}.${name}: the default must be a string`);
      const max = property['x-mnemo-id'] === true ? undefined : property.maxLength;
      if (max !== undefined && !(Number.isSafeInteger(max) && (max as number) > 0)) throw new TypeError(`${where}.${name}: maxLength must be an integer > 0`);
      spec[name] = {
        type: 'string',
        ...(fallback === undefined ? {} : { default: fallback }),
        ...(max === undefined ? {} : { maxLength: max as number }),
      };
    } else if (property.type === 'integer') {
      if (fallback !== undefined && !Number.isSafeInteger(fallback)) throw new TypeError(`${where}.${name}: the default must be an integer`);
      spec[name] = fallback === undefined ? { type: 'int' } : { type: 'int', default: fallback as number };
    } else {
      throw new TypeError(`${where}.${name}: only string and integer fields are read`);
    }
  }
  return spec;
}

/**
 * fastify's `validatorCompiler` for the API's routes: a body or query string is read with
 * `readBody` / `readQuery` against its schema (the result replaces it, typed); a failure is
 * the `RequestValidationError` the error handler answers 422. Path parameters pass as they
 * are (the handlers check ids with `requireIds`, a 400).
 */
export const fieldValidatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart, method, url }) => {
  if (httpPart !== 'body' && httpPart !== 'querystring') return () => true;
  const spec = fieldSpecOf(schema as ObjectSchema, `${method} ${url} ${httpPart}`);
  const read = httpPart === 'body' ? readBody : readQuery;
  return (data: unknown) => {
    try {
      return { value: read(data, spec) };
    } catch (error) {
      return { error: error as Error };
    }
  };
};
