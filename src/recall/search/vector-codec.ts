/**
 * A stored vector: the FNV-1a hash (u32, little-endian) of the text it was computed from, then
 * the vector as Float32 little-endian, normalized to unit length so cosine is a dot product.
 * The hash lets a reader skip a vector whose text changed since (a long-term line rewritten)
 * instead of ranking the old text.
 */
export function textHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function encodeVector(hash: number, vector: Float32Array): Buffer {
  const out = Buffer.allocUnsafe(4 + vector.length * 4);
  out.writeUInt32LE(hash, 0);
  let norm = 0;
  for (const x of vector) norm += x * x;
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  for (let i = 0; i < vector.length; i++) out.writeFloatLE(vector[i]! * scale, 4 + i * 4);
  return out;
}

export function vectorHash(bytes: Uint8Array): number {
  return (bytes[0]! | (bytes[1]! << 8) | (bytes[2]! << 16) | (bytes[3]! << 24)) >>> 0;
}

/** The dot product of a stored (unit) vector with `query` (unit too): the cosine. 0 when the dimensions differ. */
export function cosineWith(bytes: Uint8Array, query: Float32Array): number {
  const n = (bytes.length - 4) >> 2;
  if (n !== query.length) return 0;
  const view = new DataView(bytes.buffer, bytes.byteOffset + 4, n * 4);
  let dot = 0;
  for (let i = 0; i < n; i++) dot += view.getFloat32(i * 4, true) * query[i]!;
  return dot;
}

export function unit(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const x of vector) norm += x * x;
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  return vector.map((x) => x * scale);
}
