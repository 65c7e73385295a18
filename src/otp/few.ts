/**
 * A set that is almost always of one: a process's links (its supervisor) and monitors (whoever
 * routes to it). Held as the item itself until a second one arrives, then as a Set: a live
 * process pays for no Set of one (~150 bytes each). Items must not themselves be Sets.
 */
export type Few<T extends object> = T | Set<T> | undefined;

export function fewWith<T extends object>(few: Few<T>, item: T): Few<T> {
  if (few === undefined || few === item) return item;
  if (few instanceof Set) return few.add(item);
  return new Set([few, item]);
}

export function fewWithout<T extends object>(few: Few<T>, item: T): Few<T> {
  if (few === item) return undefined;
  if (few instanceof Set) {
    few.delete(item);
    if (few.size === 0) return undefined;
  }
  return few;
}

export function fewHas<T extends object>(few: Few<T>, item: T): boolean {
  return few === item || (few instanceof Set && few.has(item));
}

export function fewSize<T extends object>(few: Few<T>): number {
  return few === undefined ? 0 : few instanceof Set ? few.size : 1;
}

/** The items, as a snapshot (safe to change `few` while iterating it). */
export function fewItems<T extends object>(few: Few<T>): T[] {
  return few === undefined ? [] : few instanceof Set ? [...few] : [few];
}
