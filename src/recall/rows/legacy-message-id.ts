/**
 * The demo's `message_id` parsing (reference §3.1), used for rows imported from its folder
 * layout and for anchors passed to the window tools (an LLM may send `"3"` for 3).
 *
 * Python's `int(value)` is mirrored for integers and numeric strings (`7`, `"7"`, `" 7 "`,
 * `"+7"`); a result `<= 0` is invalid. Unlike Python, booleans (`True` -> 1) and non-integral
 * floats (`2.9` -> 2) are invalid here, as are strings Python would also refuse (`"5.0"`,
 * `"x"`), digit-group underscores (`"1_0"`), and ids beyond 2^53. Invalid ids are back-filled.
 */
export function parseMessageId(value: unknown): number | null {
  let n: number;
  if (typeof value === 'number') {
    n = value;
  } else if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)) {
    n = Number(value.trim());
  } else {
    return null;
  }
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

/**
 * The demo's back-fill, in file order: a row with an invalid id gets `next`; then
 * `next = max(next, id + 1)`. Returns the effective ids (duplicates possible, as in the demo).
 */
export function backfillMessageIds(rawIds: readonly unknown[]): number[] {
  let next = 1;
  return rawIds.map((raw) => {
    const id = parseMessageId(raw) ?? next;
    next = Math.max(next, id + 1);
    return id;
  });
}
