/**
 * `search` filters of MnemoStore: every entry must hold for an item to match. An entry is
 * either a value (the item's field equals it) or an object of operators, the set LangGraph's
 * InMemoryStore supports: `$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte` (numbers compared as
 * numbers), `$in`, `$nin` (the field is / is not one of a list).
 *
 * Equality is JSON equality, so `{ tags: ['a'] }` matches an item whose `tags` is `['a']`
 * (InMemoryStore compares with `===`, which no object or array ever satisfies). Keys are
 * top-level fields; a dotted key (`'profile.city'`) reaches into nested objects.
 */
import { jsonEqual } from './json-equal.ts';

const OPERATORS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin']);

export function matchesFilter(value: Record<string, unknown>, filter: Record<string, unknown> | undefined): boolean {
  if (filter === undefined) return true;
  return Object.entries(filter).every(([path, condition]) => matches(fieldAt(value, path), condition));
}

function isOperators(condition: unknown): condition is Record<string, unknown> {
  if (typeof condition !== 'object' || condition === null || Array.isArray(condition)) return false;
  const keys = Object.keys(condition);
  return keys.length > 0 && keys.every((k) => OPERATORS.has(k));
}

function matches(field: unknown, condition: unknown): boolean {
  if (!isOperators(condition)) return jsonEqual(field, condition);
  return Object.entries(condition).every(([op, operand]) => {
    switch (op) {
      case '$eq':
        return jsonEqual(field, operand);
      case '$ne':
        return !jsonEqual(field, operand);
      case '$gt':
        return Number(field) > Number(operand);
      case '$gte':
        return Number(field) >= Number(operand);
      case '$lt':
        return Number(field) < Number(operand);
      case '$lte':
        return Number(field) <= Number(operand);
      case '$in':
        return Array.isArray(operand) && operand.some((o) => jsonEqual(field, o));
      case '$nin':
        return !Array.isArray(operand) || !operand.some((o) => jsonEqual(field, o));
      default:
        return false;
    }
  });
}

function fieldAt(value: Record<string, unknown>, path: string): unknown {
  if (Object.prototype.hasOwnProperty.call(value, path)) return value[path];
  let at: unknown = value;
  for (const part of path.split('.')) {
    if (typeof at !== 'object' || at === null || !Object.prototype.hasOwnProperty.call(at, part)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}
